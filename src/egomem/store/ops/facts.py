"""Profile facts: add, supersede (the old row is kept, closed), close, delete, reinforce, confirm.

Evidence weight (M3-Agent's +1/-1 edges): a new fact has support 1 and one evidence row
(its episode); `confirm` adds +1 from a later episode that says it again; a contradiction
(`contradicted=True` on supersede or close: the user said it changed, or retracted it)
adds -1 to the old fact *and* closes it. The newest statement wins, as before, because
people's facts change (a vote of weights would keep an address after a move); the -1
stays in the old row and its evidence, so history shows how well supported it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import sqlalchemy as sa

from egomem.errors import NotFoundError, StoreError
from egomem.schemas import Fact, FactKind, Op, Sensitivity, now, turns_to_db
from egomem.store.db import Database
from egomem.store.ops.evidence import EvidenceOps
from egomem.store.ops.history import HistoryOps
from egomem.store.ops.users import UserOps
from egomem.store.schema import facts, history

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
    def __init__(self, db: Database, log: HistoryOps, users: UserOps, evidence: EvidenceOps) -> None:
        self.db, self.log, self.users, self.evidence = db, log, users, evidence

    def _insert(self, fact: Fact, evidence_from: Sequence[str] = ()) -> Fact:
        """Insert with its evidence: its own episode (+1), or the rows of the facts it merges."""
        if not fact.text.strip():
            raise StoreError("a fact needs non-empty text")
        values = fact.model_dump()
        values["kind"] = FactKind(fact.kind).value
        values["sensitivity"] = Sensitivity(fact.sensitivity).value
        values["support"] = 0  # the evidence rows below set it
        values["source_turns"] = turns_to_db(fact.source_turns)
        self.db.execute(_INSERT, {c.name: values[c.name] for c in facts.c})
        if evidence_from:
            support = self.evidence.copy("fact", evidence_from, fact.id)
        else:
            self.evidence.record("fact", fact.id, fact.source_episode, 1, fact.valid_from, fact.source_text)
            support = 1
        return fact.model_copy(update={"support": support})

    def add(self, fact: Fact, *, cause: str = "", evidence_from: Sequence[str] = ()) -> Fact:
        """Add a fact (support 1); with `evidence_from`, one that merges those facts' evidence."""
        with self.db.transaction():
            self.users.get(fact.user_id)
            fact = self._insert(fact, evidence_from)
            self.log.write(Op.ADD, "fact", fact.id, fact.user_id, None, fact.model_dump(), cause)
        return fact

    def confirm(
        self, fact_id: str, *, episode_id: str | None, at: float, source_text: str | None = None, cause: str = ""
    ) -> Fact:
        """A later episode says a current fact again: support + 1, its episode linked. History
        records the update agent's NOOP (nothing new to add) with the support before and after."""
        with self.db.transaction():
            old = self.get(fact_id)
            if old.valid_to is not None:
                raise StoreError(f"fact {fact_id} is closed: only a current fact can be confirmed")
            self.evidence.record("fact", fact_id, episode_id, 1, at, source_text)
            new = old.model_copy(update={"support": old.support + 1})
            after = {"support": new.support, "episode": episode_id, "source_text": source_text}
            self.log.write(Op.NOOP, "fact", fact_id, old.user_id, {"support": old.support}, after, cause)
        return new

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

    def supersede(
        self,
        old_id: str,
        new: Fact,
        *,
        at: float | None = None,
        cause: str = "",
        contradicted: bool = False,
        evidence_from: Sequence[str] = (),
    ) -> Fact:
        """Close `old_id` (valid_to = at) and add `new` in its place; both are kept. With
        `contradicted`, `new`'s episode counts -1 against the old fact (a correction, not a merge)."""
        at = now() if at is None else at
        with self.db.transaction():
            old = self.get(old_id)
            if old.valid_to is not None:
                raise StoreError(f"fact {old_id} is already superseded")
            if new.user_id != old.user_id:
                raise StoreError("a fact can only be superseded by a fact of the same user")
            if contradicted:
                self.evidence.record("fact", old_id, new.source_episode, -1, at, new.source_text)
            self._close(old_id, at, new.id)
            new = self._insert(new, evidence_from)
            self.log.write(Op.UPDATE, "fact", new.id, new.user_id, old.model_dump(), new.model_dump(), cause)
        return new

    def delete(self, fact_id: str, *, cause: str = "") -> None:
        with self.db.transaction():
            old = self.get(fact_id)
            self.db.execute(sa.delete(facts).where(facts.c.id == fact_id))
            self.log.write(Op.DELETE, "fact", fact_id, old.user_id, old.model_dump(), None, cause)

    def close(
        self,
        fact_id: str,
        *,
        at: float | None = None,
        superseded_by: str | None = None,
        cause: str = "",
        contradicted: bool = False,
        episode_id: str | None = None,
        source_text: str | None = None,
    ) -> Fact:
        """End a fact's validity without a replacement row (a retraction, or a duplicate merged
        into `superseded_by`); the row is kept, history gets a DELETE entry with both states.
        With `contradicted` (a retraction), `episode_id` counts -1 against the fact."""
        at = now() if at is None else at
        with self.db.transaction():
            old = self.get(fact_id)
            if old.valid_to is not None:
                raise StoreError(f"fact {fact_id} is already closed")
            if superseded_by is not None and self.get(superseded_by).user_id != old.user_id:
                raise StoreError("a fact can only be merged into a fact of the same user")
            if contradicted:
                self.evidence.record("fact", fact_id, episode_id, -1, at, source_text)
            self._close(fact_id, at, superseded_by)
            new = self.get(fact_id)
            self.log.write(Op.DELETE, "fact", fact_id, old.user_id, old.model_dump(), new.model_dump(), cause)
        return new

    def set_sensitivity(self, fact_id: str, sensitivity: Sensitivity, *, cause: str = "") -> Fact:
        """Override a fact's sensitivity (the person said "keep that between us", or "you can tell them")."""
        value = Sensitivity(sensitivity)
        with self.db.transaction():
            old = self.get(fact_id)
            self.db.execute(sa.update(facts).where(facts.c.id == fact_id).values(sensitivity=value.value))
            new = old.model_copy(update={"sensitivity": value})
            before, after = {"sensitivity": old.sensitivity.value}, {"sensitivity": value.value}
            self.log.write(Op.UPDATE, "fact", fact_id, old.user_id, before, after, cause)
        return new

    def forget(self, user_id: str, fact_ids: Sequence[str], *, cause: str = "") -> int:
        """Erase facts of one person with their history ("forget what I said about X"): the rows, their
        evidence (cascade) and every history row that holds their text go; one audit row says how many
        went, without their text. Returns the number of facts erased."""
        ids = list(dict.fromkeys(fact_ids))
        if not ids:
            return 0
        with self.db.transaction():
            owned = self.db.fetch(sa.select(facts.c.id).where(facts.c.id.in_(ids), facts.c.user_id == user_id))
            if len(owned) != len(ids):
                raise StoreError("forget: every fact must belong to the person asking")
            self.db.execute(sa.delete(history).where(history.c.entity == "fact", history.c.entity_id.in_(ids)))
            self.db.execute(sa.delete(facts).where(facts.c.id.in_(ids)))
            self.log.write(Op.DELETE, "fact", f"forgot:{len(ids)}", user_id, None, {"forgotten": len(ids)}, cause)
        return len(ids)

    def mark_used(self, fact_ids: Sequence[str], at: float) -> None:
        """Reinforce retrieved facts (use count, last use) for memory strength."""
        if not fact_ids:
            return
        with self.db.transaction():
            for fact_id in fact_ids:
                self.db.execute(
                    sa.update(facts).where(facts.c.id == fact_id).values(use_count=facts.c.use_count + 1, last_used=at)
                )
