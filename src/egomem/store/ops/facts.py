"""Profile facts: add, supersede (the old row is kept, closed), close, delete, reinforce."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import sqlalchemy as sa

from egomem.errors import NotFoundError, StoreError
from egomem.schemas import Fact, FactKind, Op, now
from egomem.store.db import Database
from egomem.store.ops.history import HistoryOps
from egomem.store.ops.users import UserOps
from egomem.store.schema import facts

# Built once: the hot read paths skip statement construction and SQLAlchemy's cache-key work.
_BY_ID = sa.select(facts).where(facts.c.id == sa.bindparam("id"))
_INSERT = sa.insert(facts)


@cache
def _of_user(include_history: bool, by_kind: bool) -> sa.Select[Any]:
    query = sa.select(facts).where(facts.c.user_id == sa.bindparam("user_id"))
    if not include_history:
        query = query.where(facts.c.valid_to.is_(None))
    if by_kind:
        query = query.where(facts.c.kind.in_(sa.bindparam("kinds", expanding=True)))
    return query.order_by(facts.c.valid_from, facts.c.id)


class FactOps:
    def __init__(self, db: Database, log: HistoryOps, users: UserOps) -> None:
        self.db, self.log, self.users = db, log, users

    def _insert(self, fact: Fact) -> None:
        if not fact.text.strip():
            raise StoreError("a fact needs non-empty text")
        values = fact.model_dump()
        values["kind"] = FactKind(fact.kind).value
        self.db.execute(_INSERT, {c.name: values[c.name] for c in facts.c})

    def add(self, fact: Fact, *, cause: str = "") -> Fact:
        with self.db.transaction():
            self.users.get(fact.user_id)
            self._insert(fact)
            self.log.write(Op.ADD, "fact", fact.id, fact.user_id, None, fact.model_dump(), cause)
        return fact

    def get(self, fact_id: str) -> Fact:
        row = self.db.first(_BY_ID, {"id": fact_id})
        if row is None:
            raise NotFoundError(f"unknown fact id {fact_id!r}")
        return Fact.model_validate(dict(row))

    def all(
        self, user_id: str, *, kinds: Sequence[FactKind] | None = None, include_history: bool = False
    ) -> list[Fact]:
        params: dict[str, object] = {"user_id": user_id}
        if kinds:
            params["kinds"] = [FactKind(k).value for k in kinds]
        rows = self.db.fetch(_of_user(include_history, bool(kinds)), params)
        return [Fact.model_validate(dict(r)) for r in rows]

    def _close(self, fact_id: str, at: float, superseded_by: str | None) -> None:
        self.db.execute(sa.update(facts).where(facts.c.id == fact_id).values(valid_to=at, superseded_by=superseded_by))

    def supersede(self, old_id: str, new: Fact, *, at: float | None = None, cause: str = "") -> Fact:
        """Close `old_id` (valid_to = at) and add `new` in its place; both are kept."""
        at = now() if at is None else at
        with self.db.transaction():
            old = self.get(old_id)
            if old.valid_to is not None:
                raise StoreError(f"fact {old_id} is already superseded")
            if new.user_id != old.user_id:
                raise StoreError("a fact can only be superseded by a fact of the same user")
            self._close(old_id, at, new.id)
            self._insert(new)
            self.log.write(Op.UPDATE, "fact", new.id, new.user_id, old.model_dump(), new.model_dump(), cause)
        return new

    def delete(self, fact_id: str, *, cause: str = "") -> None:
        with self.db.transaction():
            old = self.get(fact_id)
            self.db.execute(sa.delete(facts).where(facts.c.id == fact_id))
            self.log.write(Op.DELETE, "fact", fact_id, old.user_id, old.model_dump(), None, cause)

    def close(
        self, fact_id: str, *, at: float | None = None, superseded_by: str | None = None, cause: str = ""
    ) -> Fact:
        """End a fact's validity without a replacement row (a retraction, or a duplicate merged
        into `superseded_by`); the row is kept, history gets a DELETE entry with both states."""
        at = now() if at is None else at
        with self.db.transaction():
            old = self.get(fact_id)
            if old.valid_to is not None:
                raise StoreError(f"fact {fact_id} is already closed")
            if superseded_by is not None and self.get(superseded_by).user_id != old.user_id:
                raise StoreError("a fact can only be merged into a fact of the same user")
            self._close(fact_id, at, superseded_by)
            new = self.get(fact_id)
            self.log.write(Op.DELETE, "fact", fact_id, old.user_id, old.model_dump(), new.model_dump(), cause)
        return new

    def mark_used(self, fact_ids: Sequence[str], at: float) -> None:
        """Reinforce retrieved facts (use count, last use) for memory strength."""
        if not fact_ids:
            return
        with self.db.transaction():
            for fact_id in fact_ids:
                self.db.execute(
                    sa.update(facts).where(facts.c.id == fact_id).values(use_count=facts.c.use_count + 1, last_used=at)
                )
