"""People: create, read, rename, mark seen, placeholder flag; purge lives in purge.py, merge and split in repair.py."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import RowMapping

from egomem.errors import NotFoundError, StoreError
from egomem.schemas import DeletionReport, Op, User
from egomem.store.db import Database
from egomem.store.ops import purge
from egomem.store.ops.history import HistoryOps
from egomem.store.schema import users

# Built once: the hot read paths skip statement construction and SQLAlchemy's cache-key work.
_BY_ID = sa.select(users).where(users.c.id == sa.bindparam("id"))
_INSERT = sa.insert(users)


def user_from_row(row: RowMapping) -> User:
    return User(
        id=row["id"],
        name=row["name"],
        placeholder=bool(row["placeholder"]),
        created_at=row["created_at"],
        last_seen=row["last_seen"],
    )


def clean_name(name: str | None) -> str | None:
    if name is None:
        return None
    name = " ".join(name.split())
    if len(name) > 200:
        raise StoreError("a name may be at most 200 characters")
    return name or None


class UserOps:
    def __init__(self, db: Database, log: HistoryOps) -> None:
        self.db, self.log = db, log

    def create(self, name: str | None = None, *, placeholder: bool = False, cause: str = "") -> User:
        user = User(name=clean_name(name), placeholder=placeholder)
        with self.db.transaction():
            self.db.execute(
                _INSERT,
                {
                    "id": user.id,
                    "name": user.name,
                    "placeholder": int(user.placeholder),
                    "created_at": user.created_at,
                    "last_seen": user.last_seen,
                },
            )
            self.log.write(Op.ADD, "user", user.id, user.id, None, user.model_dump(), cause)
        return user

    def get(self, user_id: str) -> User:
        row = self.db.first(_BY_ID, {"id": user_id})
        if row is None:
            raise NotFoundError(f"unknown user id {user_id!r}")
        return user_from_row(row)

    def all(self, *, include_placeholders: bool = True) -> list[User]:
        query = sa.select(users)
        if not include_placeholders:
            query = query.where(users.c.placeholder == 0)
        return [user_from_row(r) for r in self.db.fetch(query.order_by(users.c.created_at, users.c.id))]

    def find_by_name(self, name: str) -> list[User]:
        query = (
            sa.select(users)
            .where(sa.func.lower(users.c.name) == sa.func.lower(name.strip()))
            .order_by(users.c.placeholder, users.c.created_at)
        )
        return [user_from_row(r) for r in self.db.fetch(query)]

    def _update(self, user_id: str, cause: str, **values: object) -> User:
        with self.db.transaction():
            before = self.get(user_id)
            self.db.execute(sa.update(users).where(users.c.id == user_id).values(**values))
            after = self.get(user_id)
            self.log.write(Op.UPDATE, "user", user_id, user_id, before.model_dump(), after.model_dump(), cause)
        return after

    def rename(self, user_id: str, name: str | None, *, cause: str = "") -> User:
        return self._update(user_id, cause, name=clean_name(name))

    def set_placeholder(self, user_id: str, placeholder: bool, *, cause: str = "") -> User:
        return self._update(user_id, cause, placeholder=int(placeholder))

    def touch(self, user_id: str, at: float) -> None:
        """Record that the user was seen (no history row: this is telemetry, not memory)."""
        with self.db.transaction():
            self.get(user_id)
            self.db.execute(sa.update(users).where(users.c.id == user_id).values(last_seen=at))

    def delete(self, user_id: str, *, cause: str = "") -> DeletionReport:
        """Purge every trace of the user (keys, facts, edges, solo episodes, history)."""
        return purge.delete_user(self, user_id, cause=cause)
