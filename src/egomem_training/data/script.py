"""The dialog-script format that `egomem data build` reads (docs/data.md describes it).

A script is the people (each user's profile and social graph) and their sessions with
the assistant, in order. A JSON file holds one `Script` object; a JSONL file holds one
record per line, each `{"user": {...}}` or `{"session": {...}}`, so long scripts can be
written and concatenated line by line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from egomem.errors import InputError


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a misspelt key is an error, not silently ignored


class Relation(_Strict):
    """One edge of the user's social graph: `name` is the user's `relation` (Mia: daughter)."""

    name: str = Field(min_length=1)
    relation: str = Field(min_length=1)
    facts: list[str] = Field(default_factory=list)  # what the user knows about that person


class Profile(_Strict):
    """What the Level-1 MemChunk says about the user (the product's section titles)."""

    about: list[str] = Field(default_factory=list)
    facts: list[str] = Field(default_factory=list)
    preferences: list[str] = Field(default_factory=list)
    summaries: list[str] = Field(default_factory=list)  # earlier conversations, newest first


class User(_Strict):
    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    profile: Profile = Field(default_factory=Profile)
    social: list[Relation] = Field(default_factory=list)


class Retr(_Strict):
    """The gold `<retr>` query of a Level-2 turn: relation words, then keywords."""

    relations: list[str] = Field(min_length=1)
    keywords: list[str] = Field(default_factory=list)


class Turn(_Strict):
    """A user utterance and the assistant's answer. `level` 1: answered from the user's own
    profile (Level-1); 2: needs facts about people the user knows (Level-2: `retr` and
    `facts` required); 0: no memory needed."""

    user: str = Field(min_length=1)
    assistant: str = Field(min_length=1)
    level: Literal[0, 1, 2] = 0
    retr: Retr | None = None
    facts: list[str] = Field(default_factory=list)  # the supporting facts retrieved into Level-2
    generated_by: str | None = None  # the model that wrote `assistant` (None: the source's or the rules' line)

    @model_validator(mode="after")
    def _level2_has_query(self) -> Turn:
        if self.level == 2 and (self.retr is None or not self.facts):
            raise ValueError("a level-2 turn needs `retr` (its query words) and `facts` (what is retrieved)")
        if self.level != 2 and (self.retr is not None or self.facts):
            raise ValueError("`retr` and `facts` belong to level-2 turns only")
        return self


class Session(_Strict):
    id: str = Field(min_length=1)
    user: str = Field(min_length=1)  # a User.id
    turns: list[Turn] = Field(min_length=1)
    source: str = "hand-written"  # where the lines come from (a converter names its corpus; "generated" for LLM lines)
    # When the session took place (epoch seconds, UTC); None: not known (an evaluation dates it itself).
    start: float | None = None
    # Set when the `assistant` lines are another person's, not the robot's: a conversation between
    # the user and `other_speaker` that the robot heard (LoCoMo). What the product memorises of the
    # session then follows (egomem_training/eval/product_memory.py).
    other_speaker: str | None = None


class Script(_Strict):
    users: list[User] = Field(min_length=1)
    sessions: list[Session] = Field(min_length=1)

    @model_validator(mode="after")
    def _references(self) -> Script:
        ids = [u.id for u in self.users]
        if len(set(ids)) != len(ids):
            raise ValueError("user ids must be unique")
        sids = [s.id for s in self.sessions]
        if len(set(sids)) != len(sids):
            raise ValueError("session ids must be unique")
        unknown = sorted({s.user for s in self.sessions} - set(ids))
        if unknown:
            raise ValueError(f"sessions name unknown users: {', '.join(unknown)}")
        return self

    def user(self, user_id: str) -> User:
        return next(u for u in self.users if u.id == user_id)


def load_script(path: Path) -> Script:
    """Read a .json (one Script) or .jsonl (user / session records) file; InputError if invalid."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read script {path}: {exc}") from exc
    try:
        if path.suffix == ".jsonl":
            users: list[Any] = []
            sessions: list[Any] = []
            for n, line in enumerate(text.splitlines(), 1):
                if not line.strip():
                    continue
                rec = json.loads(line)
                if not isinstance(rec, dict) or len(rec) != 1 or next(iter(rec)) not in ("user", "session"):
                    raise InputError(f'{path}:{n}: a line must be {{"user": ...}} or {{"session": ...}}')
                (users if "user" in rec else sessions).append(next(iter(rec.values())))
            return Script.model_validate({"users": users, "sessions": sessions})
        return Script.model_validate_json(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not JSON: {exc}") from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise InputError(f"{path}: invalid script at {where or 'top level'}: {first['msg']}") from exc


def write_jsonl(script: Script, path: Path) -> None:
    """The script as JSONL (users first, then sessions): what load_script reads back."""
    lines = [json.dumps({"user": u.model_dump()}, ensure_ascii=False) for u in script.users]
    lines += [json.dumps({"session": s.model_dump()}, ensure_ascii=False) for s in script.sessions]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
