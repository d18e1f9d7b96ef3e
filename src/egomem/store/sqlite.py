"""SQLite driver: the embedded default. WAL journal, foreign keys, IMMEDIATE write
transactions (so two processes serialise instead of failing mid-write), and
schema migrations from `migrations/NNNN_*.sql` tracked in PRAGMA user_version."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from egomem.errors import StoreError
from egomem.store.sql import Row, SQLStore


def migrations() -> list[tuple[int, str]]:
    """(version, sql) for every migration shipped in the package, in order."""
    out = []
    for entry in resources.files("egomem.store").joinpath("migrations").iterdir():
        if entry.name.endswith(".sql") and entry.name[:4].isdigit():
            out.append((int(entry.name[:4]), entry.read_text(encoding="utf-8")))
    return sorted(out)


class SQLiteStore(SQLStore):
    def __init__(self, path: str | Path, *, busy_timeout_ms: int = 10_000) -> None:
        super().__init__()
        self.path = Path(path)
        try:
            if str(path) != ":memory:":
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                str(path), isolation_level=None, check_same_thread=False, timeout=busy_timeout_ms / 1000
            )
            self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            self._conn.execute("PRAGMA foreign_keys = ON")
            if str(path) != ":memory:":
                self._conn.execute("PRAGMA journal_mode = WAL")
                self._conn.execute("PRAGMA synchronous = NORMAL")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot open memory store at {path}: {exc}") from exc
        except OSError as exc:
            raise StoreError(f"cannot create data directory {self.path.parent}: {exc.strerror}") from exc

    def _migrate(self) -> None:
        with self.transaction():
            current = int(self._conn.execute("PRAGMA user_version").fetchone()[0])
            known = migrations()
            newest = known[-1][0] if known else 0
            if current > newest:
                raise StoreError(
                    f"the store has schema version {current}, newer than this egomem ({newest}): upgrade egomem"
                )
            for version, sql in known:
                if version > current:
                    for statement in _statements(sql):
                        self._conn.execute(statement)
                    self._conn.execute(f"PRAGMA user_version = {version}")

    def schema_version(self) -> int:
        return int(self._conn.execute("PRAGMA user_version").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # -- driver hooks ----------------------------------------------------------
    def _begin(self) -> None:
        self._conn.execute("BEGIN IMMEDIATE")

    def _commit(self) -> None:
        self._conn.execute("COMMIT")

    def _rollback(self) -> None:
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        with self._lock:
            try:
                return self._conn.execute(sql, tuple(params)).fetchall()
            except sqlite3.IntegrityError as exc:
                raise StoreError(f"write refused by the store: {exc}") from exc
            except sqlite3.OperationalError as exc:
                raise StoreError(f"store error: {exc}") from exc
            except UnicodeEncodeError as exc:
                raise StoreError("text with invalid Unicode (a lone surrogate) cannot be stored") from exc

    def _insert_returning_id(self, sql: str, params: Sequence[Any]) -> int:
        with self._lock:
            try:
                cur = self._conn.execute(sql, tuple(params))
            except sqlite3.IntegrityError as exc:
                raise StoreError(f"write refused by the store: {exc}") from exc
            except UnicodeEncodeError as exc:
                raise StoreError("text with invalid Unicode (a lone surrogate) cannot be stored") from exc
            return int(cur.lastrowid or 0)

    def table_names(self) -> list[str]:
        rows = self._execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        return [r[0] for r in rows]

    def dump_table(self, table: str) -> list[Row]:
        if table not in self.table_names():
            raise StoreError(f"no table {table!r}")
        return self._execute(f"SELECT * FROM {table}")


def _statements(script: str) -> list[str]:
    """Split a migration into statements (our migrations hold no ';' inside literals)."""
    lines = [ln for ln in script.splitlines() if not ln.strip().startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
