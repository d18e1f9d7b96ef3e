"""The social graph: edges from a person to another person (or to a name not yet met).

Edges carry evidence weights as facts do (store/ops/facts.py): support 1 and the origin
episode when added, +1 per confirming episode, -1 from the episode that ends them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa

from egomem.errors import NotFoundError, StoreError
from egomem.schemas import Op, Relation, now, turns_to_db
from egomem.store.db import Database
from egomem.store.ops.evidence import EvidenceOps
from egomem.store.ops.history import HistoryOps
from egomem.store.schema import relations

if TYPE_CHECKING:  # users.py imports purge.py, which imports this module
    from egomem.store.ops.users import UserOps


def edges_of(user_id: str | sa.BindParameter[str]) -> sa.ColumnElement[bool]:
    """Edges where the user is subject or object."""
    return sa.or_(relations.c.subject_id == user_id, relations.c.object_id == user_id)


# Built once: the hot read paths skip statement construction and SQLAlchemy's cache-key work.
_BY_ID = sa.select(relations).where(relations.c.id == sa.bindparam("id"))
_EDGES = {
    history: sa.select(relations)
    .where(edges_of(sa.bindparam("user_id")), *([] if history else [relations.c.valid_to.is_(None)]))
    .order_by(relations.c.valid_from, relations.c.id)
    for history in (False, True)
}


class RelationOps:
    def __init__(self, db: Database, log: HistoryOps, users: UserOps, evidence: EvidenceOps) -> None:
        self.db, self.log, self.users, self.evidence = db, log, users, evidence

    def add(self, relation: Relation, *, cause: str = "") -> Relation:
        if not relation.relation.strip():
            raise StoreError("a relation needs a non-empty relation word")
        if relation.object_id is None and not (relation.object_name or "").strip():
            raise StoreError("a relation needs an object user or an object name")
        with self.db.transaction():
            self.users.get(relation.subject_id)
            if relation.object_id is not None:
                self.users.get(relation.object_id)
            state = {**relation.model_dump(), "support": 0}  # the evidence row sets it
            state["source_turns"] = turns_to_db(relation.source_turns)
            self.db.execute(sa.insert(relations).values({c.name: state[c.name] for c in relations.c}))
            self.evidence.record("relation", relation.id, relation.source_episode, 1, relation.valid_from)
            relation = relation.model_copy(update={"support": 1})
            state = relation.model_dump()
            subject, other = relation.subject_id, relation.object_id
            self.log.write(Op.ADD, "relation", relation.id, subject, None, state, cause, other_user_id=other)
        return relation

    def get(self, relation_id: str) -> Relation:
        row = self.db.first(_BY_ID, {"id": relation_id})
        if row is None:
            raise NotFoundError(f"unknown relation id {relation_id!r}")
        return Relation.model_validate(dict(row))

    def all(self, user_id: str, *, include_history: bool = False) -> list[Relation]:
        """Edges where the user is subject or object."""
        rows = self.db.fetch(_EDGES[include_history], {"user_id": user_id})
        return [Relation.model_validate(dict(r)) for r in rows]

    def confirm(
        self, relation_id: str, *, episode_id: str | None, at: float, source_text: str | None = None, cause: str = ""
    ) -> Relation:
        """A later episode states a current edge again: support + 1 (history: NOOP, support before/after)."""
        with self.db.transaction():
            old = self.get(relation_id)
            if old.valid_to is not None:
                raise StoreError(f"relation {relation_id} is closed: only a current relation can be confirmed")
            self.evidence.record("relation", relation_id, episode_id, 1, at, source_text)
            new = old.model_copy(update={"support": old.support + 1})
            after = {"support": new.support, "episode": episode_id, "source_text": source_text}
            self.log.write(
                Op.NOOP,
                "relation",
                relation_id,
                old.subject_id,
                {"support": old.support},
                after,
                cause,
                other_user_id=old.object_id,
            )
        return new

    def close(
        self,
        relation_id: str,
        *,
        at: float | None = None,
        cause: str = "",
        contradicted: bool = False,
        episode_id: str | None = None,
        source_text: str | None = None,
    ) -> Relation:
        """End an edge (kept, closed). With `contradicted` (the user said it ended or changed),
        `episode_id` counts -1 against it."""
        at = now() if at is None else at
        with self.db.transaction():
            old = self.get(relation_id)
            if contradicted:
                self.evidence.record("relation", relation_id, episode_id, -1, at, source_text)
            self.db.execute(sa.update(relations).where(relations.c.id == relation_id).values(valid_to=at))
            new = self.get(relation_id)
            before, after = old.model_dump(), new.model_dump()
            self.log.write(
                Op.UPDATE, "relation", relation_id, old.subject_id, before, after, cause, other_user_id=old.object_id
            )
        return new
