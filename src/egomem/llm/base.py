"""The one LLM interface: a named task, a pydantic payload in, a validated pydantic object out.

Extraction and update are *tasks*. A chat backend (OpenAI-compatible HTTP, local GGUF)
renders the task's versioned prompt file with the payload, asks the model for JSON
constrained by the output schema, and validates the answer; the rule-based backend
runs deterministic code for the same task. Callers never see which one answered.
"""

from __future__ import annotations

import abc
import json
import time
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from egomem.errors import EgomemError
from egomem.llm.partial_json import closed_prefixes
from egomem.llm.prompts import render_prompt

T = TypeVar("T", bound=BaseModel)


class LLMError(EgomemError):
    """A task could not be answered. `reason` is short and stable enough to store
    (e.g. in an episode's `failed:<reason>` status)."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


def transient(exc: LLMError) -> bool:
    """A failure that may pass (the server is down, slow, overloaded), not a wrong answer."""
    reason = exc.reason
    if reason.startswith("endpoint HTTP "):
        code = reason.removeprefix("endpoint HTTP ")
        return code in ("408", "429") or code.startswith("5")
    return reason.startswith("endpoint") or reason == "local model failed"


class PromptTooLong(LLMError):
    """The prompt and the room for the answer do not fit the model's context. Raised before any
    token is computed, so a caller may cut its input and ask again at no cost
    (memory/extractor.py cuts a long session into pieces)."""

    def __init__(self, detail: str = "") -> None:
        super().__init__("prompt too long", detail)


@dataclass
class Usage:
    """Token and call accounting, summed over the provider's lifetime."""

    calls: int = 0
    failures: int = 0
    retries: int = 0
    cut_short_kept: int = 0  # answers that stopped part-way, whose complete items were kept
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # Prompt tokens the model actually computed: a local model reuses the state of a prompt
    # prefix it has already evaluated, so this is below prompt_tokens (0 when unknown: servers).
    prompt_tokens_evaluated: int = 0
    # Time spent answering: wall seconds, and CPU seconds of the whole process meanwhile
    # (a local model's threads run in-process; other threads' work counts too).
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    # Of `seconds`, where a local model spent them (llama.cpp's own timers; 0 when unknown: servers):
    # computing prompt tokens, and computing generated tokens. The rest is sampling (the JSON grammar
    # included) and the Python around it.
    prompt_eval_seconds: float = 0.0
    decode_seconds: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class LLMProvider(abc.ABC):
    """Answers named tasks with validated structured output."""

    name: str = "abstract"

    def __init__(self) -> None:
        self.usage = Usage()

    @abc.abstractmethod
    def run(self, task: str, payload: BaseModel, schema: type[T]) -> T:
        """Answer `task` for `payload` as an instance of `schema`; raise LLMError on failure."""

    def for_memory(self) -> LLMProvider:
        """The provider for the background memory passes (extraction, updates): this one, unless
        the backend runs them otherwise (the local model: `llm.memory_threads`)."""
        return self


@dataclass
class ChatReply:
    content: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    prompt_tokens_evaluated: int = 0
    prompt_eval_s: float = 0.0  # wall seconds computing the prompt (local models; 0 when unknown)
    decode_s: float = 0.0  # wall seconds computing the generated tokens (local models; 0 when unknown)
    # Why the answer stopped before its JSON closed ("answer looped", "answer cut off"; "" when it
    # did not): `content` is then what was written before, kept only by a PREFIX_IS_ANSWER schema.
    cut_short: str = ""


class ChatProvider(LLMProvider):
    """A backend that talks to a chat model; subclasses implement `chat` only."""

    def __init__(self, prompt_version: int = 1) -> None:
        super().__init__()
        self.prompt_version = prompt_version

    @abc.abstractmethod
    def chat(self, messages: list[dict[str, str]], json_schema: dict[str, Any], schema_name: str) -> ChatReply:
        """One completion constrained to `json_schema`; raise LLMError when the backend fails."""

    def render_payload(self, payload: BaseModel) -> str:
        """The task's input as the prompt shows it (a backend may make it more compact)."""
        return payload.model_dump_json(indent=1)

    def run(self, task: str, payload: BaseModel, schema: type[T]) -> T:
        system, user = render_prompt(task, self.render_payload(payload), self.prompt_version)
        json_schema = schema.model_json_schema()
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        self.usage.calls += 1
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            reply = self.chat(messages, json_schema, schema.__name__)
        except LLMError:
            self.usage.failures += 1
            raise
        finally:
            self.usage.seconds += time.perf_counter() - t0
            self.usage.cpu_seconds += time.process_time() - c0
        self.usage.prompt_tokens += reply.prompt_tokens
        self.usage.completion_tokens += reply.completion_tokens
        self.usage.prompt_tokens_evaluated += reply.prompt_tokens_evaluated
        self.usage.prompt_eval_seconds += reply.prompt_eval_s
        self.usage.decode_seconds += reply.decode_s
        try:
            if reply.cut_short:
                answer = complete_part(reply.content, schema, reply.cut_short)
                self.usage.cut_short_kept += 1
                return answer
            return parse_json_reply(reply.content, schema)
        except LLMError:
            self.usage.failures += 1
            raise


def complete_part(content: str, schema: type[T], why: str) -> T:
    """What stands of an answer that stopped part-way (`why`): its complete list elements, when
    the schema says a prefix of its list is an answer (`PREFIX_IS_ANSWER`, llm/partial_json.py);
    otherwise, or when no complete element was written, LLMError(`why`)."""
    if getattr(schema, "PREFIX_IS_ANSWER", False):
        for text in closed_prefixes(content):
            try:
                return schema.model_validate(json.loads(text))
            except (json.JSONDecodeError, ValidationError):
                continue
    raise LLMError(why, "the model stopped before closing its JSON, and nothing complete was written before")


def parse_json_reply(content: str, schema: type[T]) -> T:
    """Validate a model's JSON answer. Tolerates a ```json fence (some servers add one
    even under a response_format); anything else malformed is an LLMError."""
    text = content.strip()
    if text.startswith("```"):
        text = text.strip("`")
        text = text[4:] if text.lower().startswith("json") else text
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LLMError("malformed JSON", f"{exc.msg} at char {exc.pos}") from exc
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "<root>"
        raise LLMError("wrong JSON shape", f"{where}: {first['msg']}") from exc
