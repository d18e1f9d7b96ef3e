"""The operation log: one row per memory change (or deliberate non-change)."""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import RowMapping

from egomem.schemas import HistoryEntry, Op, now
from egomem.store.db import Database
from egomem.store.schema import history


def _entry(row: RowMapping) -> HistoryEntry:
    return HistoryEntry(
        id=row["id"],
        at=row["at"],
        op=Op(row["op"]),
        entity=row["entity"],
        entity_id=row["entity_id"],
        user_id=row["user_id"],
        before=None if row["before_json"] is None else json.loads(row["before_json"]),
        after=None if row["after_json"] is None else json.loads(row["after_json"]),
        cause=row["cause"],
    )


def _json(state: dict[str, Any] | None) -> str | None:
    return None if state is None else json.dumps(state, default=str)


_INSERT = sa.insert(history)


def concerns(user_id: str) -> sa.ColumnElement[bool]:
    """History rows that hold data of this person."""
    return sa.or_(history.c.user_id == user_id, history.c.other_user_id == user_id)


class HistoryOps:
    def __init__(self, db: Database) -> None:
        self.db = db

    def write(
        self,
        op: Op,
        entity: str,
        entity_id: str,
        user_id: str | None,
        before: dict[str, Any] | None,
        after: dict[str, Any] | None,
        cause: str,
        other_user_id: str | None = None,
    ) -> None:
        """Append one row; call it inside the transaction of the change it records."""
        self.db.execute(
            _INSERT,
            {
                "at": now(),
                "op": op.value,
                "entity": entity,
                "entity_id": entity_id,
                "user_id": user_id,
                "other_user_id": other_user_id,
                "before_json": _json(before),
                "after_json": _json(after),
                "cause": cause,
            },
        )

    def entries(self, user_id: str | None = None, limit: int | None = None) -> list[HistoryEntry]:
        query = sa.select(history)
        if user_id is not None:
            query = query.where(concerns(user_id))
        query = query.order_by(history.c.id)
        if limit is not None:
            query = query.limit(int(limit))
        return [_entry(r) for r in self.db.fetch(query)]

    def noop(self, entity: str, entity_id: str, user_id: str | None, detail: dict[str, Any], cause: str) -> None:
        """Record a decision to change nothing (the update agent's NOOP)."""
        with self.db.transaction():
            self.write(Op.NOOP, entity, entity_id, user_id, None, detail, cause)
