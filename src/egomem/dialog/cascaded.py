"""The cascaded dialog model: transcribed user turns -> any OpenAI-compatible chat endpoint.

The agent's VAD and ASR turn speech into user turns; this model answers them with a chat
model that has the current Level-1 and Level-2 MemChunks in its system prompt (the
versioned, open prompt `llm/prompts/dialog.v1.md`). A MemChunk refresh (`on_memchunk`)
replaces the memory part of the next request's system prompt: for a cascaded model the
"KV cache" is the prompt.

Two phases per turn, as the `<retr>` protocol asks of any dialog model:

1. a completion with the stop sequence `<answer>`. If its text holds a `<retr>:` query,
   the query is yielded token by token, `<answer>` included. The agent feeds those tokens
   to its query parser, runs Level-2 retrieval and calls `on_memchunk` with the new
   Level-2 chunk before it asks for the next token.
2. then a second completion, with that Level-2 chunk in the system prompt, writes the
   answer, which is yielded. Without a query the first completion's text is the answer.

`proactive` greets a user whose Level-1 chunk just arrived. A short conversation history
(bounded, cleared when the user changes) goes with each request. An endpoint that is down
or slow never raises into the agent: the user hears a short honest fallback line.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from egomem.dialog.base import DuplexModel, UserTurn
from egomem.dialog.template import tokens
from egomem.errors import ConfigError
from egomem.llm.base import ChatReply, LLMError
from egomem.llm.prompts import prompt_path
from egomem.providers import BuildContext, OpenAILLMConfig
from egomem.retrieval.query_parser import CLOSE, OPEN, RetrQuery, parse_query
from egomem.schemas import MemChunk

log = logging.getLogger(__name__)

FALLBACK = "Sorry, I can't answer right now."
NOT_FOUND = "Sorry, I don't remember anything about that."
NO_LEVEL1 = "(nobody recognised yet)"
NO_LEVEL2 = "(nothing looked up)"
NOTHING_FOUND = "(the lookup found nothing)"
GREET_EVENT = "[The person above has just appeared in front of you. They have not said anything yet.]"
_SLOT = re.compile(r"\{\{(\w+)\}\}")


class Completer(Protocol):
    """A free-text chat completion (`OpenAICompatProvider.complete`)."""

    def complete(
        self,
        messages: list[dict[str, str]],
        *,
        stop: list[str] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> ChatReply: ...


@dataclass(frozen=True)
class DialogPrompt:
    """The three parts of `dialog.v<N>.md`: the system prompt, and what the greeting and the
    answer-after-lookup phases add to it."""

    system: str
    greet: str
    answer: str

    @classmethod
    def load(cls, version: int = 1) -> DialogPrompt:
        path = prompt_path("dialog", version)
        if not path.is_file():
            raise ConfigError(f"no dialog prompt version {version}: {path.name}")
        text = path.read_text(encoding="utf-8")
        system, sep1, rest = text.partition("---greet---")
        greet, sep2, answer = rest.partition("---answer---")
        if not (sep1 and sep2) or "{{level1}}" not in system or "{{level2}}" not in system:
            raise ConfigError(f"{path.name} needs {{{{level1}}}}, {{{{level2}}}}, ---greet--- and ---answer---")
        return cls(system.strip(), greet.strip(), answer.strip())


def fill(template: str, **values: str) -> str:
    """Substitute `{{name}}` slots in one pass (memory text that itself holds `{{...}}` stays as it is)."""
    return _SLOT.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def spoken(text: str) -> str:
    """What may be said aloud: no query markers (a stray `<retr>` would start a query in the agent)."""
    text = text.split(OPEN, 1)[0]
    return " ".join(text.replace(CLOSE, " ").split())


def split_query(text: str) -> tuple[str, RetrQuery | None]:
    """A first-phase reply -> (text before the query, the query or None).

    A server that honours `stop` ends the reply before `<answer>`; for one that does not,
    the reply is cut there as it would have been. A `<retr>` with no terms is no query."""
    cut = text.find(CLOSE)
    start = text.find(OPEN)
    if start < 0 or 0 <= cut < start:
        return (text[:cut] if cut >= 0 else text), None
    query = parse_query(text[start + len(OPEN) : cut if cut >= 0 else None])
    return text[:start], None if query.empty else query


class CascadedChatModel(DuplexModel):
    name = "cascaded chat model (OpenAI-compatible endpoint)"

    def __init__(
        self,
        llm: Completer,
        *,
        prompt_version: int = 1,
        history_turns: int = 6,
        max_chars_per_message: int = 600,
        max_tokens: int = 160,
        temperature: float = 0.6,
    ) -> None:
        self.llm = llm
        self.prompt = DialogPrompt.load(prompt_version)
        self.max_chars = max_chars_per_message
        self.max_tokens = max_tokens
        self.temperature = temperature
        self._history: deque[dict[str, str]] = deque(maxlen=2 * history_turns)
        self._lock = threading.Lock()  # memchunks arrive from the retrieval thread
        self._user_id: str | None = None
        self._level1 = ""
        self._level2: str | None = None  # None: no lookup yet (or the user changed since)
        self._level2_seq = 0
        self._greet_pending = False

    @classmethod
    def from_config(cls, cfg: OpenAILLMConfig, ctx: BuildContext | None = None) -> CascadedChatModel:
        from egomem.llm.openai_compat import OpenAICompatProvider

        if not cfg.base_url or not cfg.model:
            raise ConfigError("dialog.provider = 'openai' needs dialog.base_url and dialog.model")
        # A conversation cannot wait through four attempts: one retry at most.
        provider = OpenAICompatProvider(
            cfg.base_url,
            cfg.model,
            api_key=os.environ.get(cfg.api_key_env) or None,
            timeout_s=cfg.timeout_s,
            max_retries=min(cfg.max_retries, 1),
        )
        return cls(provider)

    # -- memory -----------------------------------------------------------------------------
    def on_memchunk(self, chunk: MemChunk) -> None:
        with self._lock:
            if chunk.level == 1:
                if chunk.user_id != self._user_id:
                    # Another person: their memory only, none of the previous one's conversation.
                    self._history.clear()
                    self._level2 = None
                    self._greet_pending = chunk.user_id is not None
                self._user_id = chunk.user_id
                self._level1 = chunk.text.strip()
            else:
                self._level2 = chunk.text.strip()
                self._level2_seq += 1

    # -- dialog -----------------------------------------------------------------------------
    def on_user_turn(self, turn: UserTurn) -> Iterator[str]:
        text = " ".join(turn.text.split())[: self.max_chars]
        if not text:
            return
        user_msg = {"role": "user", "content": text}
        with self._lock:
            user = self._user_id
        try:
            first = self._complete(self._system(), user_msg, stop=[CLOSE])
        except LLMError as exc:
            log.warning("dialog endpoint failed: %s", exc)
            yield from tokens(FALLBACK)
            return
        head, query = split_query(first)
        if query is None:
            answer = spoken(head)
            if not answer:
                log.warning("dialog endpoint gave an empty answer")
                answer = FALLBACK
        else:
            rel, kw = ", ".join(query.relation_words), ", ".join(query.keywords)
            # Text before the query is not said: the agent reads everything up to <answer> as the query.
            with self._lock:
                seq = self._level2_seq
            yield from tokens(f"{OPEN}:\n{rel}\n{kw}{CLOSE}")
            # The agent has run Level-2 retrieval and called on_memchunk by now.
            with self._lock:
                if self._level2_seq == seq:
                    self._level2 = ""  # no chunk came back: the lookup found nothing
            system = self._system() + "\n\n" + fill(self.prompt.answer, relations=rel or "-", keywords=kw or "-")
            try:
                answer = spoken(self._complete(system, user_msg, stop=[OPEN]))
            except LLMError as exc:
                log.warning("dialog endpoint failed after the lookup: %s", exc)
                answer = FALLBACK
            answer = answer or NOT_FOUND
        self._remember(user, user_msg, answer)
        yield from tokens(answer)

    def proactive(self, t: float) -> Iterator[str]:
        with self._lock:
            if not self._greet_pending:
                return iter(())
            self._greet_pending = False
        return self._greet()

    def _greet(self) -> Iterator[str]:
        with self._lock:
            user = self._user_id
        system = self._system() + "\n\n" + self.prompt.greet
        event = {"role": "user", "content": GREET_EVENT}
        try:
            greeting = spoken(self._complete(system, event, stop=[OPEN]))
        except LLMError as exc:
            # Nobody asked anything: staying silent is honest, an apology out of nowhere is not.
            log.warning("dialog endpoint failed, no greeting: %s", exc)
            return
        if greeting:
            self._remember(user, event, greeting)
            yield from tokens(greeting)

    # -- requests ---------------------------------------------------------------------------
    def _system(self) -> str:
        with self._lock:
            level1 = self._level1 or NO_LEVEL1
            level2 = NO_LEVEL2 if self._level2 is None else (self._level2 or NOTHING_FOUND)
        return fill(self.prompt.system, level1=level1, level2=level2)

    def _complete(self, system: str, last: dict[str, str], *, stop: list[str]) -> str:
        with self._lock:
            history = list(self._history)
        messages = [{"role": "system", "content": system}, *history, last]
        reply = self.llm.complete(messages, stop=stop, max_tokens=self.max_tokens, temperature=self.temperature)
        return reply.content

    def _remember(self, user: str | None, user_msg: dict[str, str], answer: str) -> None:
        """Append one exchange (always a user/assistant pair: strict chat templates need the
        roles to alternate), unless the user changed while it was generated."""
        with self._lock:
            if user == self._user_id:
                self._history.append(user_msg)
                self._history.append({"role": "assistant", "content": answer[: self.max_chars]})
