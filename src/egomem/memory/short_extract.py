"""The `extract` task in its short form (prompt version 3 and later): fewer tokens each way.

A model on a CPU spends most of a session writing its answer, and the longest part of
the long form is `source_text`, a copy of the user's words for every item. Here the user's
turns are numbered lines and an item names its turn ("u": 3); the code takes the source
sentence from that turn (the one sharing most words with the item), so provenance is
still checked by the extractor on the user's own words, and a quote can not be misspelt.

    input:  {"date": "3 May 2024", "lines": ["U1: Hi, I'm Lena.", "A: Hello!", "U2: ..."]}
    output: {"name": "Lena", "items": [{"k": "fact", "t": "works as a nurse", "u": 2}, ...],
             "summary": "On 3 May 2024, Lena talked about her job."}

Anything the model writes that does not fit (an unknown turn, a turn that shares no word
with the item, an empty text, a relation without a person) is dropped item by item; an
answer that is not this JSON at all is the provider's LLMError, and the caller falls back
as for the long form.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from egomem.memory.items import ExtractedItem, ItemKind, SessionText
from egomem.memory.statements import is_question, sentences

SHORT_PROMPT_VERSION = 3
_KIND: dict[str, ItemKind] = {"fact": "fact", "pref": "preference", "rel": "relation"}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ShortSession(_Model):
    """Input of the short `extract` task: the session as numbered lines."""

    # Not shown to the model: identifies the session for callers that cache answers.
    episode_id: str = Field(default="", exclude=True)
    date: str
    user_name: str | None = None
    lines: list[str]


class ShortItem(_Model):
    k: Literal["fact", "pref", "rel"]
    t: str = Field(default="", max_length=300)
    u: int = Field(default=0, description="the number of the user's line the item comes from")
    r: str = Field(default="", max_length=40, description="relations: the relation word")
    p: str = Field(default="", max_length=80, description="relations: the person's name")
    x: bool = Field(default=False, description="the user says this is no longer true")


class ShortExtraction(_Model):
    name: str = Field(default="", max_length=80)
    items: list[ShortItem] = Field(default_factory=list)
    summary: str = Field(default="", max_length=400)


def user_lines(session: SessionText) -> list[str]:
    """The user's turns in order (line U1 is the first)."""
    return [t.text.strip() for t in session.user_turns()]


def to_short(session: SessionText) -> ShortSession:
    lines: list[str] = []
    n = 0
    for t in session.turns:
        if not t.text.strip():
            continue
        if t.speaker == "user":
            n += 1
            lines.append(f"U{n}: {t.text.strip()}")
        else:
            lines.append(f"A: {t.text.strip()}")
    return ShortSession(episode_id=session.episode_id, date=session.date, user_name=session.user_name, lines=lines)


# Words an item's text shares with any sentence, which say nothing of where it came from.
_GENERIC = frozenset(
    "has have had named works work worked lives live lived likes like liked the and with for from was were are "
    "his her their about who that this".split()
)


def _stems(text: str) -> set[str]:
    """Three-letter stems of the content words ("hiking" and "hike" share "hik")."""
    words = re.findall(r"[a-z0-9']+", text.lower().replace("’", "'"))
    return {w[:3] for w in words if len(w) > 2 and w not in _GENERIC}


def source_sentence(turn: str, text: str) -> str:
    """The sentence of `turn` sharing most words with `text` (a statement before a question
    on a tie; the first on a further tie); "" when none shares a word with it: the item was
    not said there (the model named a wrong line, or wrote what the assistant said)."""
    want = _stems(text)
    best, best_key = "", (0, False)
    for s in sentences(turn):
        key = (len(want & _stems(s)), not is_question(s))
        if key[0] and key > best_key:
            best, best_key = s, key
    return best


def expand(short: ShortExtraction, session: SessionText) -> list[ExtractedItem]:
    """The long-form items of a short answer; items that cannot be placed are left out."""
    turns = user_lines(session)
    out: list[ExtractedItem] = []
    name = short.name.strip()
    if name:
        said = next((s for t in turns for s in sentences(t) if name.lower() in s.lower()), "")
        if said:
            out.append(ExtractedItem(kind="name", text=name, source_text=said))
    for it in short.items:
        text, person, rel = it.t.strip(), it.p.strip(), it.r.strip().lower()
        if not 1 <= it.u <= len(turns):
            continue
        if it.k == "rel":
            if not (person and rel):
                continue
            text = text or f"has a {rel} named {person}"
        if not text:
            continue
        source = source_sentence(turns[it.u - 1], f"{text} {person}")
        if not source:
            continue
        out.append(
            ExtractedItem(
                kind=_KIND[it.k],
                text=text,
                source_text=source,
                relation=rel if it.k == "rel" else "",
                person=person if it.k == "rel" else "",
                retract=it.x and it.k != "rel",
            )
        )
    summary = short.summary.strip()
    if summary:
        out.append(ExtractedItem(kind="summary", text=summary, source_text=" ".join(turns)[:2000] or summary))
    return out
