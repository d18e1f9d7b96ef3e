"""A record of the rows one operation changes (before and after), so that it can be undone exactly.

Each change names a table, the row's primary key, and the columns it touched before and after
(`before` None: the row was inserted; `after` None: it was deleted). Undoing checks that every
recorded row is still as the operation left it (a later write would be lost otherwise), then
puts each back, newest change first. Only the touched columns are read: an identity key is moved
by its `user_id` alone, its vector is never read.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from egomem.errors import StoreError
from egomem.store.db import Database
from egomem.store.schema import episode_participants, metadata, users

# Columns that change while memory is used (a poll, a retrieval), not by what a repair recorded:
# a change there since the repair does not block its undo.
TELEMETRY = {("users", "last_seen"), ("facts", "use_count"), ("facts", "last_used")}
Row = dict[str, Any]
# The rows that point at a person: a person a repair created is removed by its undo only without them.
_REFERENCES = (("facts", "user_id"), ("relations", "subject_id"), ("relations", "object_id"))


def _table(name: str) -> sa.Table:
    return metadata.tables[name]


def _where(table: sa.Table, key: Row) -> sa.ColumnElement[bool]:
    return sa.and_(*(table.c[k] == v for k, v in key.items()))


def _key_of(table: sa.Table, row: Row) -> Row:
    return {c.name: row[c.name] for c in table.primary_key.columns}


class Changes:
    """The changes of one operation, written through it (call inside the operation's transaction)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.rows: list[dict[str, Any]] = []

    def _read(self, table: sa.Table, key: Row, columns: Sequence[str]) -> Row | None:
        row = self.db.first(sa.select(*(table.c[c] for c in columns)).where(_where(table, key)))
        return None if row is None else dict(row)

    def update(self, table: sa.Table, key: Row, values: Row) -> None:
        before = self._read(table, key, list(values))
        if before is None:
            raise StoreError(f"no {table.name} row {key}")
        if before == values:
            return
        self.db.execute(sa.update(table).where(_where(table, key)).values(**values))
        self.rows.append({"table": table.name, "key": key, "before": before, "after": dict(values)})

    def update_many(self, table: sa.Table, where: sa.ColumnElement[bool], values: Row) -> int:
        """Update every row matching `where`, each recorded by its key; returns how many."""
        keys = [dict(r) for r in self.db.fetch(sa.select(*table.primary_key.columns).where(where))]
        for key in keys:
            self.update(table, key, values)
        return len(keys)

    def insert(self, table: sa.Table, row: Row) -> None:
        self.db.execute(sa.insert(table).values(**row))
        self.rows.append({"table": table.name, "key": _key_of(table, row), "before": None, "after": dict(row)})

    def delete(self, table: sa.Table, key: Row) -> None:
        before = self._read(table, key, [c.name for c in table.columns])
        if before is None:
            raise StoreError(f"no {table.name} row {key}")
        self.db.execute(sa.delete(table).where(_where(table, key)))
        self.rows.append({"table": table.name, "key": key, "before": before, "after": None})

    def delete_many(self, table: sa.Table, where: sa.ColumnElement[bool]) -> int:
        keys = [dict(r) for r in self.db.fetch(sa.select(*table.primary_key.columns).where(where))]
        for key in keys:
            self.delete(table, key)
        return len(keys)


def undo(db: Database, rows: list[dict[str, Any]]) -> None:
    """Put every recorded row back as it was (inside the caller's transaction); StoreError, and
    nothing changed once the transaction rolls back, when a row has changed since."""
    last: dict[str, dict[str, Any]] = {}  # a row changed twice (moved, then deleted) is checked as left
    for change in rows:
        last[json.dumps([change["table"], change["key"]], sort_keys=True)] = change
    for change in last.values():
        _check(db, change)
    for change in reversed(rows):
        table, key, before = _table(change["table"]), change["key"], change["before"]
        if change["after"] is None:
            db.execute(sa.insert(table).values(**before))
        elif before is None:
            if table is users:
                _check_unreferenced(db, key["id"])
            db.execute(sa.delete(table).where(_where(table, key)))
        else:
            db.execute(sa.update(table).where(_where(table, key)).values(**before))


def _check(db: Database, change: dict[str, Any]) -> None:
    table, key, after = _table(change["table"]), change["key"], change["after"]
    columns = list(after) if after is not None else [c.name for c in table.primary_key.columns]
    row = db.first(sa.select(*(table.c[c] for c in columns)).where(_where(table, key)))
    if after is None:
        if row is not None:
            raise StoreError(f"cannot undo: {table.name} row {_show(key)} exists again since the repair")
        return
    if row is None:
        raise StoreError(f"cannot undo: {table.name} row {_show(key)} is gone since the repair")
    changed = [c for c in after if (table.name, c) not in TELEMETRY and row[c] != after[c]]
    if changed:
        raise StoreError(f"cannot undo: {table.name} row {_show(key)} changed since the repair ({', '.join(changed)})")


def _check_unreferenced(db: Database, user_id: str) -> None:
    """A person the repair created may be removed only if nothing new was learnt about them since."""
    checks = [(_table(t).c[c], t) for t, c in _REFERENCES]
    checks += [(_table("identity_keys").c.user_id, "identity_keys"), (episode_participants.c.user_id, "episodes")]
    for column, what in checks:
        if db.first(sa.select(column).where(column == user_id).limit(1)) is not None:
            raise StoreError(f"cannot undo: {what} of {user_id} were added since the repair")


def _show(key: Row) -> str:
    return ",".join(str(v) for v in key.values())
