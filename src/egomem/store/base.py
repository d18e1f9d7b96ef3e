"""The memory store interface M. One abstract interface; one driver per database.

Every mutating method writes its own history row in the same transaction, so the
operation log can never disagree with the data. Methods raise NotFoundError for
unknown ids and DimensionError for vectors that do not fit their model.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from egomem.schemas import (
    DeletionReport,
    Episode,
    Fact,
    FactKind,
    HistoryEntry,
    IdentityKey,
    Modality,
    Relation,
    User,
)


class MemoryStore(abc.ABC):
    """Persistent memory of people: identities, profiles, social graph, episodes."""

    # -- lifecycle -------------------------------------------------------------
    @abc.abstractmethod
    def close(self) -> None: ...

    @abc.abstractmethod
    def transaction(self) -> AbstractContextManager[None]:
        """Group several calls into one atomic write (nesting joins the outer one)."""

    @abc.abstractmethod
    def schema_version(self) -> int: ...

    # -- users -----------------------------------------------------------------
    @abc.abstractmethod
    def create_user(self, name: str | None = None, *, placeholder: bool = False, cause: str = "") -> User: ...

    @abc.abstractmethod
    def get_user(self, user_id: str) -> User: ...

    @abc.abstractmethod
    def list_users(self, *, include_placeholders: bool = True) -> list[User]: ...

    @abc.abstractmethod
    def find_users_by_name(self, name: str) -> list[User]: ...

    @abc.abstractmethod
    def rename_user(self, user_id: str, name: str | None, *, cause: str = "") -> User: ...

    @abc.abstractmethod
    def touch_user(self, user_id: str, at: float) -> None:
        """Record that the user was seen (no history row: this is telemetry, not memory)."""

    @abc.abstractmethod
    def set_placeholder(self, user_id: str, placeholder: bool, *, cause: str = "") -> User: ...

    @abc.abstractmethod
    def merge_users(self, keep_id: str, drop_id: str, *, cause: str = "") -> User:
        """Move everything of `drop_id` onto `keep_id` and remove `drop_id`."""

    @abc.abstractmethod
    def delete_user(self, user_id: str, *, cause: str = "") -> DeletionReport:
        """Purge every trace of the user (keys, facts, edges, solo episodes, history)."""

    # -- identity keys -----------------------------------------------------------
    @abc.abstractmethod
    def add_key(
        self,
        user_id: str,
        modality: Modality,
        vector: np.ndarray | Sequence[float],
        model: str,
        *,
        condition: str = "",
        cause: str = "",
    ) -> IdentityKey: ...

    @abc.abstractmethod
    def list_keys(self, modality: Modality | None = None, user_id: str | None = None) -> list[IdentityKey]: ...

    @abc.abstractmethod
    def delete_key(self, key_id: int, *, cause: str = "") -> None: ...

    # -- profile facts -------------------------------------------------------------
    @abc.abstractmethod
    def add_fact(self, fact: Fact, *, cause: str = "") -> Fact: ...

    @abc.abstractmethod
    def get_fact(self, fact_id: str) -> Fact: ...

    @abc.abstractmethod
    def list_facts(
        self,
        user_id: str,
        *,
        kinds: Sequence[FactKind] | None = None,
        include_history: bool = False,
    ) -> list[Fact]: ...

    @abc.abstractmethod
    def supersede_fact(self, old_id: str, new: Fact, *, at: float | None = None, cause: str = "") -> Fact:
        """Close `old_id` (valid_to = at) and add `new` in its place; both are kept."""

    @abc.abstractmethod
    def delete_fact(self, fact_id: str, *, cause: str = "") -> None: ...

    @abc.abstractmethod
    def close_fact(
        self, fact_id: str, *, at: float | None = None, superseded_by: str | None = None, cause: str = ""
    ) -> Fact:
        """End a fact's validity without a replacement row (a retraction, or a duplicate merged
        into `superseded_by`); the row is kept, history gets a DELETE entry with both states."""

    @abc.abstractmethod
    def mark_facts_used(self, fact_ids: Sequence[str], at: float) -> None:
        """Reinforce retrieved facts (use count, last use) for memory strength."""

    # -- relations (social graph) --------------------------------------------------
    @abc.abstractmethod
    def add_relation(self, relation: Relation, *, cause: str = "") -> Relation: ...

    @abc.abstractmethod
    def list_relations(self, user_id: str, *, include_history: bool = False) -> list[Relation]:
        """Edges where the user is subject or object."""

    @abc.abstractmethod
    def close_relation(self, relation_id: str, *, at: float | None = None, cause: str = "") -> Relation: ...

    # -- episodes --------------------------------------------------------------------
    @abc.abstractmethod
    def add_episode(self, episode: Episode, *, cause: str = "") -> Episode: ...

    @abc.abstractmethod
    def get_episode(self, episode_id: str) -> Episode: ...

    @abc.abstractmethod
    def update_episode(self, episode: Episode, *, cause: str = "") -> Episode: ...

    @abc.abstractmethod
    def list_episodes(self, user_id: str | None = None) -> list[Episode]: ...

    # -- history ---------------------------------------------------------------------
    @abc.abstractmethod
    def history(self, user_id: str | None = None, limit: int | None = None) -> list[HistoryEntry]: ...

    @abc.abstractmethod
    def log_noop(self, entity: str, entity_id: str, user_id: str | None, detail: dict[str, Any], cause: str) -> None:
        """Record a decision to change nothing (the update agent's NOOP)."""

    # -- derived views -----------------------------------------------------------------
    def export_user(self, user_id: str) -> dict[str, Any]:
        """Everything held about one user, as one JSON-serialisable dict."""
        user = self.get_user(user_id)
        return {
            "format": "egomem.export/1",
            "user": user.model_dump(),
            "keys": [k.model_dump() for k in self.list_keys(user_id=user_id)],
            "facts": [f.model_dump() for f in self.list_facts(user_id, include_history=True)],
            "relations": [r.model_dump() for r in self.list_relations(user_id, include_history=True)],
            "episodes": [e.model_dump() for e in self.list_episodes(user_id)],
            "history": [h.model_dump() for h in self.history(user_id)],
        }
