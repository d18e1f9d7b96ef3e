"""The short extraction schema (`[memory] extract_schema = "short"`): fewer tokens out.

On a CPU every token a model writes costs a forward pass, and the full schema (memory/items.py)
makes it write long key names and copy each item's source words. Here the session goes to the
model as numbered lines, one per sentence the user said (the other speakers' lines unnumbered,
context only), and each item names its source by number instead of quoting it:

    {"items": [{"k": "fact", "s": 2, "t": "works as a nurse"},
               {"k": "rel", "s": 3, "t": "has a brother named Jonas", "r": "brother", "p": "Jonas"}]}

`expand` turns the answer back into `ExtractedItem`s whose `source_text` is that sentence, so the
extractor's provenance checks run unchanged. No summary is asked for: the rules supplement writes
the session's summary (memory/extractor.py adds it when the model gave none).
"""

from __future__ import annotations

import re
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from egomem.memory.items import ExtractedItem, ItemKind, SessionText

# A sentence ends at . ! or ? followed by a space (abbreviations split too: harmless, each part
# is still the user's own words).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_KINDS: dict[str, ItemKind] = {"name": "name", "fact": "fact", "pref": "preference", "rel": "relation"}
_LABELS = {"assistant": "assistant", "other": "other person"}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CompactSession(_Model):
    """Input of the `extract_short` task."""

    lines: list[str]
    user_name: str | None = None


class CompactItem(_Model):
    k: Literal["name", "fact", "pref", "rel"]
    s: int = Field(description="the number of the user's line the item comes from")
    t: str = Field(min_length=1, max_length=300)
    r: str = ""  # rel: the relation word
    p: str = ""  # rel: the person's name
    x: bool = False  # the user says it no longer holds (retract)


class CompactExtraction(_Model):
    """Output of the `extract_short` task."""

    PREFIX_IS_ANSWER: ClassVar[bool] = True  # as Extraction's (memory/items.py)
    items: list[CompactItem] = Field(default_factory=list)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def compact_session(session: SessionText) -> tuple[CompactSession, list[str]]:
    """The session as numbered lines, and the user's sentences (line k is `user_sentences[k - 1]`)."""
    lines: list[str] = []
    said: list[str] = []
    for turn in session.turns:
        if not turn.text.strip():
            continue
        if turn.speaker != "user":
            lines.append(f"{_LABELS[turn.speaker]}: {turn.text.strip()}")
            continue
        for s in sentences(turn.text):
            said.append(s)
            lines.append(f"{len(said)} user: {s}")
    return CompactSession(lines=lines, user_name=session.user_name), said


def expand(answer: CompactExtraction, user_sentences: list[str]) -> tuple[list[ExtractedItem], list[CompactItem]]:
    """The answer's items as ExtractedItems (source: the numbered sentence), and the items that
    name no line of the user's (dropped: they have no provenance)."""
    items: list[ExtractedItem] = []
    bad: list[CompactItem] = []
    for c in answer.items:
        if not 1 <= c.s <= len(user_sentences):
            bad.append(c)
            continue
        kind = _KINDS[c.k]
        items.append(
            ExtractedItem(
                kind=kind,
                text=c.t.strip() or c.t,
                source_text=user_sentences[c.s - 1],
                relation=c.r.strip() if kind == "relation" else "",
                person=c.p.strip() if kind == "relation" else "",
                retract=c.x,
            )
        )
    return items, bad
