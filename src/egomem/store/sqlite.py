"""SQLite driver: the embedded default. WAL journal, foreign keys, IMMEDIATE write
transactions (so two processes serialise instead of failing mid-write) that wait up to
the busy timeout for the lock, and the schema migrations (version in PRAGMA user_version)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import NullPool

from egomem.errors import StoreError
from egomem.store import migrations
from egomem.store.base import MemoryStore
from egomem.store.capabilities import SQLITE
from egomem.store.db import Database, first_line

if TYPE_CHECKING:
    from egomem.providers import BuildContext, SQLiteStoreConfig

DB_FILE = "memory.db"


class SQLiteStore(MemoryStore):
    def __init__(self, path: str | Path, *, busy_timeout_ms: int = 10_000) -> None:
        self.path = Path(path)
        in_memory = str(path) == ":memory:"
        try:
            if not in_memory:
                self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create data directory {self.path.parent}: {exc.strerror}") from exc

        def connect() -> sqlite3.Connection:
            # isolation_level=None: no implicit transactions; Database issues BEGIN IMMEDIATE itself.
            conn = sqlite3.connect(
                str(path), isolation_level=None, check_same_thread=False, timeout=busy_timeout_ms / 1000
            )
            conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            conn.execute("PRAGMA foreign_keys = ON")
            if not in_memory:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
            return conn

        engine = sa.create_engine("sqlite://", creator=connect, poolclass=NullPool, isolation_level="AUTOCOMMIT")
        super().__init__(Database(engine, begin="BEGIN IMMEDIATE", where=f"SQLite at {path}"), SQLITE)
        try:
            migrations.migrate(self.db)
        except StoreError as exc:
            self.db.close()
            driver = exc.__cause__
            if isinstance(driver, DBAPIError):  # a corrupt or foreign file, an unreadable directory
                raise StoreError(f"cannot open memory store at {path}: {first_line(driver.orig)}") from exc
            raise

    @classmethod
    def from_config(cls, cfg: SQLiteStoreConfig, ctx: BuildContext) -> SQLiteStore:
        return cls(ctx.data_dir / DB_FILE, busy_timeout_ms=cfg.busy_timeout_ms)
