"""SQLite driver: the embedded default. WAL journal, foreign keys, IMMEDIATE write
transactions (so two processes serialise instead of failing mid-write) that wait up to
the busy timeout for the lock, and the schema migrations (version in PRAGMA user_version).

Identity keys are sealed at rest (store/crypto.py); the keyring of data keys is a database of its
own, `<name>.keyring.db` beside the store's file (memory.keyring.db for memory.db), so that a copy of
the memory database holds no data key. Both files run with `secure_delete` (deleted rows are
overwritten with zeros), and after a purge both write-ahead logs are checkpointed and truncated, so
neither file keeps a purged person's bytes (docs/privacy.md, "Keys at rest").
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import NullPool

from egomem.errors import StoreError
from egomem.store.base import MemoryStore
from egomem.store.capabilities import SQLITE
from egomem.store.crypto import MASTER_KEY_FILE, EphemeralKey, KeyFile, MasterKeySource
from egomem.store.db import Database, first_line
from egomem.store.keyring import Keyring

if TYPE_CHECKING:
    from egomem.providers import BuildContext, SQLiteStoreConfig

DB_FILE = "memory.db"
_CHECKPOINT = sa.text("PRAGMA wal_checkpoint(TRUNCATE)")


def keyring_path(path: Path) -> Path:
    return path.with_name(f"{path.stem}.keyring.db")


def sqlite_database(path: str | Path, busy_timeout_ms: int) -> Database:
    """A Database on one SQLite file (or ":memory:"), with the store's connection settings."""
    in_memory = str(path) == ":memory:"
    new_file = not in_memory and not Path(path).exists()

    def connect() -> sqlite3.Connection:
        # isolation_level=None: no implicit transactions; Database issues BEGIN IMMEDIATE itself.
        conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=busy_timeout_ms / 1000)
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA secure_delete = ON")  # deleted rows are zeroed, not left in free space
        if not in_memory:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
        return conn

    engine = sa.create_engine("sqlite://", creator=connect, poolclass=NullPool, isolation_level="AUTOCOMMIT")
    db = Database(engine, begin="BEGIN IMMEDIATE", where=f"SQLite at {path}")
    if new_file:
        db.connection()  # creates the file: readable by its owner only (it holds biometric keys)
        os.chmod(path, 0o600)
    return db


class SQLiteStore(MemoryStore):
    def __init__(
        self, path: str | Path, *, busy_timeout_ms: int = 10_000, master_key: MasterKeySource | None = None
    ) -> None:
        """`master_key`: where the master key comes from (default: master.key beside the file, made once)."""
        self.path = Path(path)
        in_memory = str(path) == ":memory:"
        try:
            if not in_memory:
                self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create data directory {self.path.parent}: {exc.strerror}") from exc
        source = master_key or (EphemeralKey() if in_memory else KeyFile(self.path.parent / MASTER_KEY_FILE))
        try:
            db = sqlite_database(path, busy_timeout_ms)
            keyring_db = sqlite_database(":memory:" if in_memory else keyring_path(self.path), busy_timeout_ms)
        except StoreError as exc:
            driver = exc.__cause__
            detail = first_line(driver.orig) if isinstance(driver, DBAPIError) else first_line(exc)
            raise StoreError(f"cannot open memory store at {path}: {detail}") from exc
        except OSError as exc:
            raise StoreError(f"cannot open memory store at {path}: {exc.strerror}") from exc
        super().__init__(db, SQLITE, Keyring(keyring_db, source, separate=True))
        try:
            self._open()
        except StoreError as exc:
            self.close()
            driver = exc.__cause__
            if isinstance(driver, DBAPIError):  # a corrupt or foreign file, an unreadable directory
                raise StoreError(f"cannot open memory store at {path}: {first_line(driver.orig)}") from exc
            raise

    @classmethod
    def from_config(cls, cfg: SQLiteStoreConfig, ctx: BuildContext) -> SQLiteStore:
        return cls(ctx.data_dir / DB_FILE, busy_timeout_ms=cfg.busy_timeout_ms, master_key=ctx.shared.get("master_key"))

    scrub_after_purge = True  # a checkpoint of two files: cheap

    def scrub(self, *, vacuum: bool = False) -> None:
        """Leave no deleted bytes in the files: checkpoint and truncate both write-ahead logs (and with
        `vacuum`, rebuild the memory database, which drops whatever earlier, non-secure deletes left)."""
        if self.db.in_transaction or str(self.path) == ":memory:":
            return
        if vacuum:
            self.db.execute(sa.text("VACUUM"))
        for db in (self.db, self.keyring.db):
            db.execute(_CHECKPOINT)
