"""Typed data models shared by every layer (the "schemas" of the Letta-style split).

The store persists these; retrieval renders them; memory writes them. Times are
Unix seconds (float) so that recorded streams and live clocks mix freely.
"""

from __future__ import annotations

import json
import time
import uuid
from datetime import UTC, date, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


def now() -> float:
    return time.time()


def day_text(when: float | date) -> str:
    """A day as people say it and sessions are dated: '8 May 2023' (Unix seconds are read in UTC)."""
    d = datetime.fromtimestamp(when, UTC) if isinstance(when, int | float) else when
    return f"{d.day} {d:%B %Y}"


class Modality(StrEnum):
    FACE = "face"
    VOICE = "voice"


class FactKind(StrEnum):
    FACT = "fact"
    PREFERENCE = "preference"
    SUMMARY = "summary"
    PERSONA = "persona"


class Sensitivity(StrEnum):
    """How private a fact is (egomem.privacy.sensitivity): decided at extraction, overridable."""

    NONE = "none"
    HEALTH = "health"
    MONEY = "money"
    RELATIONSHIP = "relationship"
    PRIVATE = "private"  # the person asked to keep it between us


class Op(StrEnum):
    ADD = "ADD"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    NOOP = "NOOP"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class User(_Model):
    id: str = Field(default_factory=lambda: new_id("u"))
    name: str | None = None
    # A placeholder is a person named in conversation but never seen or heard
    # ("my colleague John"); it is merged into the real user when they are met.
    placeholder: bool = False
    created_at: float = Field(default_factory=now)
    last_seen: float | None = None


class IdentityKey(_Model):
    """One face or voice embedding of a user, with the model it came from."""

    id: int | None = None
    user_id: str
    modality: Modality
    model: str
    dim: int
    vector: list[float]
    created_at: float = Field(default_factory=now)
    condition: str = ""  # free tag: e.g. "clean", "noisy", "profile-left"


def turns_from_db(v: object) -> object:
    """`source_turns` as the store keeps it (JSON text) or as given (a list)."""
    return json.loads(v) if isinstance(v, str) else v


def turns_to_db(turns: list[list[float]] | None) -> str | None:
    return None if turns is None else json.dumps(turns)


class Provenance(_Model):
    """Where a fact or relation came from, beyond its episode: the user turns it was said in
    ([start, end] stream seconds) and the identity decision that put it on its person (the
    status and its fused calibrated LLR; None: not recorded, e.g. an API edit or older memory)."""

    source_turns: list[list[float]] | None = None
    identity_status: str | None = None
    identity_llr: float | None = None

    _turns = field_validator("source_turns", mode="before")(turns_from_db)


class Fact(Provenance):
    id: str = Field(default_factory=lambda: new_id("f"))
    user_id: str
    kind: FactKind = FactKind.FACT
    text: str
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    source_episode: str | None = None
    source_text: str | None = None  # the utterance the fact came from (provenance)
    created_at: float = Field(default_factory=now)
    valid_from: float = Field(default_factory=now)
    valid_to: float | None = None  # closed when superseded; history is kept
    superseded_by: str | None = None
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    use_count: int = 0
    last_used: float | None = None
    # Evidence weight (M3-Agent's edge weight): 1 when learnt, +1 per later episode that
    # confirms it, -1 for the one that contradicts it; the episodes are in `Evidence`.
    support: int = 1
    # Sensitive facts stay out of Level 1/2 while someone else is present, and out of another
    # person's `ask` (egomem.privacy.sensitivity.may_recall).
    sensitivity: Sensitivity = Sensitivity.NONE

    @property
    def is_current(self) -> bool:
        return self.valid_to is None


class Relation(Provenance):
    """(subject) -[relation]-> (object): the object is a known user or a bare name."""

    id: str = Field(default_factory=lambda: new_id("r"))
    subject_id: str
    relation: str
    object_id: str | None = None
    object_name: str | None = None
    source_episode: str | None = None
    created_at: float = Field(default_factory=now)
    valid_from: float = Field(default_factory=now)
    valid_to: float | None = None
    support: int = 1  # as Fact.support


class Evidence(_Model):
    """One episode's word on a fact or a relation: +1 it said so (the item's origin, or a
    confirmation), -1 it contradicted it. An item's support is the sum of its signs."""

    id: int | None = None
    fact_id: str | None = None
    relation_id: str | None = None
    episode_id: str | None = None  # None: not from an episode (an API edit) or the episode was purged
    sign: int = Field(default=1, ge=-1, le=1)
    at: float = Field(default_factory=now)
    source_text: str | None = None


class Episode(_Model):
    id: str = Field(default_factory=lambda: new_id("e"))
    start: float
    end: float
    participants: list[str] = Field(default_factory=list)
    user_transcript: str = ""
    assistant_transcript: str = ""
    summary: str = ""
    status: str = "done"  # done | failed:<reason> | pending | held:identity unsure | dropped (memory/manager.py)
    created_at: float = Field(default_factory=now)


class HistoryEntry(_Model):
    id: int | None = None
    at: float = Field(default_factory=now)
    op: Op
    entity: str  # user | key | fact | relation | episode
    entity_id: str
    user_id: str | None = None
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    cause: str = ""


class Repair(_Model):
    """One merge or split of people (store/ops/repair.py), undoable while nothing it changed has changed since."""

    id: int
    at: float
    kind: str  # merge | split
    user_id: str  # merge: the person kept; split: the person split
    other_user_id: str  # merge: the person merged in (and removed); split: the person given the part
    other_name: str | None = None  # merge: the name of the person merged in (gone from users)
    episodes: list[str] = Field(default_factory=list)  # split: the episodes moved
    moved: dict[str, int] = Field(default_factory=dict)  # rows changed per kind (facts, relations, keys, ...)
    cause: str = ""
    undone_at: float | None = None


class MemChunk(_Model):
    """Text handed to the dialog model. Level 1: the current user's profile
    (<= 512 tokens); level 2: facts about people the user knows (<= 256 tokens)."""

    level: int = Field(ge=1, le=2)
    text: str = ""
    tokens: int = 0
    user_id: str | None = None
    at: float = Field(default_factory=now)


class ConsentEvent(_Model):
    """A consent decision with its time and evidence (the words of the turn). `user_id` None: a
    refusal or deferral by someone never enrolled (nothing that could recognise them is kept)."""

    id: int | None = None
    user_id: str | None = None
    kind: str  # consent | refusal | deferral | withdrawal | notice
    policy: str  # ask | notice | implicit
    at: float = Field(default_factory=now)
    evidence: str = ""


class DeletionReport(_Model):
    user_id: str
    removed: dict[str, int]
