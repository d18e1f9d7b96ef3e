"""The offline template responder: the default dialog model, which needs no model.

It is honest about what it is — a handful of templates, not a language model — and
exists so that the whole memory loop runs offline: it greets a recognised user by
name as soon as their Level-1 chunk arrives, recalls a fact from their profile,
asks for the name of someone it does not know, and for questions about people the
user knows it emits a `<retr>` query (relation words from a lexicon + content
keywords) and answers from the Level-2 chunk it gets back.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from egomem.dialog.base import DuplexModel, UserTurn
from egomem.providers import BuildContext
from egomem.registry import ProviderConfig
from egomem.relations import REL_WORDS
from egomem.retrieval.profile import UNSURE_VALUE
from egomem.schemas import MemChunk

_REL_RE = re.compile(rf"\b({REL_WORDS})(s)?\b", re.IGNORECASE)
_QUESTION_RE = re.compile(
    r"^(do|does|did|is|are|was|were|has|have|who|what|which|where|when|can|could|will|would|any)\b"
)
_STOP = set(
    "a an the and or but of to in on at for with about from by my your his her their our me you i we they he she "
    "it is are was were be been do does did any anyone anybody some someone who what which where when how can "
    "could will would should please tell know of there that this these those like".split()
)
# Only unambiguous introductions: "I'm a nurse" must not make anyone "A".
_NAME_RE = re.compile(r"\b(?:my name is|my name's|call me)\s+([a-z][a-z'-]+)", re.IGNORECASE)


def tokens(text: str) -> Iterator[str]:
    """Split text into word-ish tokens, keeping spaces and newlines (the monologue stream)."""
    yield from re.findall(r"\s+|[^\s]+", text)


_TO_YOU = {"is": "are", "has": "have", "was": "were", "does": "do", "goes": "go"}


def second_person(fact: str) -> str:
    """'works as a nurse' -> 'you work as a nurse' (profile facts are written in the third person)."""
    verb, _, rest = fact.partition(" ")
    if verb in _TO_YOU:
        verb = _TO_YOU[verb]
    elif verb.endswith("ies") and len(verb) > 4:
        verb = verb[:-3] + "y"
    elif verb.endswith(("sses", "shes", "ches", "xes")):
        verb = verb[:-2]
    elif verb.endswith("s") and not verb.endswith("ss"):
        verb = verb[:-1]
    return f"you {verb} {rest}".strip()


def parse_level1(text: str) -> tuple[str | None, list[str]]:
    """(user name, profile lines) from a Level-1 chunk as retrieval renders it."""
    name = None
    lines = []
    for line in text.splitlines():
        if line.startswith("Current user:"):
            value = line.split(":", 1)[1].strip()
            name = None if value == "name not known yet" or value.startswith(UNSURE_VALUE) else value
        elif line.startswith("- "):
            lines.append(line[2:].strip())
    return name, lines


class TemplateResponder(DuplexModel):
    name = "template responder (offline, no language model)"

    def __init__(self) -> None:
        self.user_id: str | None = None
        self.user_name: str | None = None
        self.profile: list[str] = []
        self.level2: list[str] = []
        self._greet_pending = False
        self._unsure = False  # Level 1 says identity is unsure who this is
        self._heard_name: str | None = None  # introduced themselves before identity caught up
        self._ack_name = False  # memory learned the current user's name mid-session: say so once
        self._acked = False  # ... and that line was the answer to the turn that gave the name

    @classmethod
    def from_config(cls, cfg: ProviderConfig, ctx: BuildContext) -> TemplateResponder:
        """The `template` dialog provider (it has no settings)."""
        return cls()

    def on_memchunk(self, chunk: MemChunk) -> None:
        if chunk.level == 1:
            changed = chunk.user_id != self.user_id
            before = self.user_name
            self.user_id = chunk.user_id
            self.user_name, self.profile = parse_level1(chunk.text)
            self._ack_name = not changed and before is None and self.user_name is not None
            self._greet_pending = changed and chunk.user_id is not None
            self._unsure = f"Current user: {UNSURE_VALUE}" in chunk.text
            if changed and self.user_name is None and self._heard_name:
                self.user_name, self._greet_pending = self._heard_name, False  # already greeted by name
            self._heard_name = None
            self.level2 = []
        else:
            self.level2 = [ln[2:].strip() for ln in chunk.text.splitlines() if ln.startswith("- ")]

    def proactive(self, t: float) -> Iterator[str]:
        if self._ack_name:
            self._ack_name, self._acked = False, True
            return tokens(f"Nice to meet you, {self.user_name}.")
        if not self._greet_pending:
            return iter(())
        self._greet_pending = False
        if self.user_name:
            text = f"Hi {self.user_name}, good to see you again!"
            fact = self._recall()
            if fact:
                text += f" Last time you told me {second_person(fact)}."
        elif self._unsure:
            # Identity cannot tell who this is (maybe someone it knows, maybe not): ask, share nothing.
            text = "Hello! I'm not sure we've met. What's your name?"
        elif self.profile:
            # Recognised, with memories, but never told us a name: we have met.
            text = "Hello again! I don't think you've told me your name yet. What's your name?"
        else:
            # Identity cannot tell a new face from a returning one whose memories are gone: ask, don't claim.
            text = "Hello! I don't know your name yet. What's your name?"
        return tokens(text)

    def _recall(self) -> str | None:
        """The first profile line that is a fact or preference (not a relation or summary)."""
        for line in self.profile:
            if ":" not in line.split(" ")[0] and not line.lower().startswith(("talked", "on ", "in ")):
                return line.rstrip(".")
        return None

    def on_user_turn(self, turn: UserTurn) -> Iterator[str]:
        text = turn.text.strip().lower()
        acked, self._acked = self._acked, False
        if not text:
            return
        rels = sorted({m.group(1).lower() for m in _REL_RE.finditer(text)})
        if rels and (_QUESTION_RE.match(text) or text.endswith("?")):
            keywords = [w for w in re.findall(r"[a-z']+", text) if w not in _STOP and not _REL_RE.fullmatch(w)]
            yield from tokens(f"<retr>:\n{', '.join(rels)}\n{', '.join(keywords)}<answer>")
            # The agent has run Level-2 retrieval by now; answer from what came back.
            yield from tokens(self._answer(rels, keywords))
            return
        m = _NAME_RE.search(text)
        if m and m.group(1).capitalize() != self.user_name:
            # A new name: someone new is introducing themselves (identity may not have caught up).
            self.user_name = self._heard_name = m.group(1).capitalize()
            yield from tokens(f"Nice to meet you, {self.user_name}.")
            return
        if acked and not text.endswith("?"):
            return  # "Nice to meet you, <name>" already answered this turn
        yield from tokens("I see. Tell me more." if not text.endswith("?") else "I'm not sure, sorry.")

    def _answer(self, rels: list[str], keywords: list[str]) -> str:
        best, best_hits = None, 0
        for line in self.level2:
            hits = sum(1 for k in keywords if k in line.lower())
            if hits > best_hits:
                best, best_hits = line, hits
        if best is None:
            return f"I don't remember anything like that about your {rels[0]}s."
        # Level-2 lines read "<name>, <relation>: <fact>"; say it as a sentence.
        m = re.match(r"^(?P<name>[^,:]+),\s*(?P<rel>[^:]+):\s*(?P<fact>.+)$", best)
        if m is None:
            return f"Yes: {best}."
        name, fact = m.group("name").strip(), m.group("fact").strip().rstrip(".")
        rel = m.group("rel").strip("() ").replace("is their", "").strip() or rels[0]
        if fact.lower().startswith(name.lower()):
            fact = fact[len(name) :].strip()
        return f"Yes, your {rel} {name} {fact}."
