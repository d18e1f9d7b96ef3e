"""One database connection, its transactions, and its errors as one-line StoreErrors.

The connection is in autocommit mode and a write transaction is opened with the
dialect's own BEGIN statement: `BEGIN IMMEDIATE` on SQLite (take the write lock up
front, so two processes queue on the busy timeout instead of failing mid-write, which
the sqlite3 module cannot express), plain `BEGIN` on PostgreSQL. Reads outside a
transaction run without one, as before; SQLAlchemy's own begin would open a transaction
for every read. `transaction()` nests by joining the outer transaction, and every
operation in `store/ops/` runs inside it, so a memory change and its history row commit
together.

A lost connection (server restart, terminated backend) raises StoreUnreachable (a StoreError);
the failed transaction is gone with it, and the next call outside a transaction reconnects.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Literal, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine, Inspector, RowMapping
from sqlalchemy.exc import DBAPIError, StatementError

from egomem.errors import StoreError, StoreUnreachable

Params = Mapping[str, Any] | Sequence[Mapping[str, Any]] | None
T = TypeVar("T")


_COMMIT = sa.text("COMMIT")
# Row ids (repairs, identity keys, ...) are 64-bit signed columns on both backends: a larger number
# is no row's id, and handing it to the driver would fail with an overflow instead of "not found".
MAX_ROW_ID = 2**63 - 1


def is_row_id(value: int) -> bool:
    """Whether `value` can be a row id (1 .. MAX_ROW_ID); any other number names no row."""
    return 1 <= int(value) <= MAX_ROW_ID


def first_line(exc: BaseException | None) -> str:
    """The first line of an error's message (drivers append SQL, parameters, hints)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class Database:
    """The store's connection to one database (`where` names it in messages, never with a password)."""

    def __init__(self, engine: Engine, *, begin: str, where: str) -> None:
        self.engine = engine
        self.where = where
        self._begin = sa.text(begin)
        self._lock = threading.RLock()
        self._depth = 0
        self._conn: Connection | None = None
        self._closed = False
        # Run once the outermost transaction has committed / rolled back (the keyring's cache and the
        # data keys it destroys only after the rows sealed under them are gone for good).
        self._after_commit: list[Callable[[], None]] = []
        self._after_rollback: list[Callable[[], None]] = []

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    # -- connection -------------------------------------------------------------------
    def connection(self) -> Connection:
        """The live connection (opened, or reopened after a loss, when no transaction is running)."""
        if self._closed:
            raise StoreError("the store is closed")
        conn = self._conn
        if conn is None or conn.closed or conn.invalidated:
            if self._depth > 0:
                raise StoreUnreachable(f"lost the connection to {self.where} in a transaction: it was rolled back")
            if conn is not None:
                conn.close()
            try:
                conn = self._conn = self.engine.connect()
            except DBAPIError as exc:
                raise StoreUnreachable(f"cannot connect to {self.where}: {first_line(exc.orig)}") from exc
        return conn

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self.engine.dispose()

    # -- transactions -----------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._lock:
            outer = self._depth == 0
            if outer:
                self.execute(self._begin)
            self._depth += 1
            try:
                yield
            except BaseException:
                self._depth -= 1
                if outer:
                    self._rollback()
                    self._run_hooks(self._after_rollback)
                raise
            self._depth -= 1
            if outer:
                try:
                    self._commit()
                except BaseException:
                    self._run_hooks(self._after_rollback)
                    raise
                self._run_hooks(self._after_commit)

    def after_commit(self, hook: Callable[[], None]) -> None:
        """Run `hook` when the current transaction commits (now, outside one); dropped on rollback."""
        with self._lock:
            if self._depth == 0:
                hook()
            else:
                self._after_commit.append(hook)

    def after_rollback(self, hook: Callable[[], None]) -> None:
        """Run `hook` if the current transaction rolls back (never, outside one)."""
        with self._lock:
            if self._depth > 0:
                self._after_rollback.append(hook)

    def _run_hooks(self, hooks: list[Callable[[], None]]) -> None:
        run = list(hooks)
        self._after_commit.clear()
        self._after_rollback.clear()
        for hook in run:
            hook()

    def _commit(self) -> None:
        try:
            self.execute(_COMMIT)
        except StoreError as exc:
            conn = self._conn
            if conn is not None and (conn.closed or conn.invalidated):
                # The COMMIT may have reached the server before the connection went: unlike a
                # loss earlier in the transaction, nobody can say whether it was applied.
                raise StoreUnreachable(
                    f"lost the connection to {self.where} while committing: the change may or may not be stored"
                ) from exc
            raise

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    def try_lock(self, name: str) -> bool:
        """Take a lock named `name` until the open transaction ends, unless another connection holds it
        (False). PostgreSQL: a transaction-level advisory lock in this schema. SQLite: a write
        transaction (BEGIN IMMEDIATE) already holds the one database lock, so this is always True."""
        if not self.in_transaction:
            raise StoreError("try_lock needs an open transaction")
        if self.dialect != "postgresql":
            return True
        query = sa.text("SELECT pg_try_advisory_xact_lock(hashtext(current_schema() || ':' || :name)) AS ok")
        row = self.first(query, {"name": name})
        return bool(row and row["ok"])

    def _rollback(self) -> None:
        conn = self._conn
        if conn is None or conn.closed or conn.invalidated:
            return  # the server dropped the transaction with the connection
        try:
            conn.exec_driver_sql("ROLLBACK")
        except DBAPIError:
            conn.invalidate()  # unusable: the next call reconnects

    # -- statements --------------------------------------------------------------------
    def execute(self, statement: sa.Executable, params: Params = None) -> None:
        """Run a statement for its effect (a list of parameter dicts runs it once per dict)."""
        self._run(statement, params, fetch=None)

    def fetch(self, statement: sa.Executable, params: Params = None) -> list[RowMapping]:
        """Run a statement and return its rows, each addressed by column name."""
        return self._run(statement, params, fetch="mappings")

    def fetch_tuples(self, statement: sa.Executable, params: Params = None) -> list[Sequence[Any]]:
        """Run a statement and return its rows as tuples (by position): for bulk reads, where
        building a name mapping per row costs about three times the fetch itself (100k keys)."""
        return self._run(statement, params, fetch="tuples")

    def fetch_sql(self, sql: str, params: Mapping[str, Any]) -> list[Sequence[Any]]:
        """Run the driver's own SQL text (no SQLAlchemy compilation) and return its rows as tuples:
        for the one statement run on every poll (store/hnsw.py nearest_sql)."""
        return self._run(sql, params, fetch="tuples")

    def first(self, statement: sa.Executable, params: Params = None) -> RowMapping | None:
        rows = self.fetch(statement, params)
        return rows[0] if rows else None

    def inspect(self, look: Callable[[Inspector], T]) -> T:
        """Ask the database about its own schema (tables, columns, reflection)."""
        with self._lock:
            try:
                return look(sa.inspect(self.connection()))
            except DBAPIError as exc:
                raise self._error(exc) from exc

    def _run(
        self, statement: sa.Executable | str, params: Params, *, fetch: Literal["mappings", "tuples"] | None
    ) -> list[Any]:
        with self._lock:
            conn = self.connection()
            try:
                if isinstance(statement, str):
                    result = conn.exec_driver_sql(statement, params)
                else:
                    result = conn.execute(statement, params)
                if fetch is None or not result.returns_rows:
                    return []
                if fetch == "mappings":
                    return list(result.mappings().all())
                return list(result.all())  # Row: a Sequence, by position
            except DBAPIError as exc:
                raise self._error(exc) from exc
            except StatementError as exc:  # raised while binding parameters, before the driver
                if isinstance(exc.orig, UnicodeEncodeError):
                    raise _bad_unicode() from exc
                raise StoreError(f"store error: {first_line(exc.orig)}") from exc
            except UnicodeEncodeError as exc:
                raise _bad_unicode() from exc

    def _error(self, exc: DBAPIError) -> StoreError:
        if exc.connection_invalidated:
            return StoreUnreachable(
                f"lost the connection to {self.where} ({first_line(exc.orig)});"
                " the operation was not applied and the next call reconnects"
            )
        if isinstance(exc, sa.exc.IntegrityError):
            return StoreError(f"write refused by the store: {first_line(exc.orig)}")
        return StoreError(f"store error: {first_line(exc.orig)}")


def _bad_unicode() -> StoreError:
    return StoreError("text with invalid Unicode (a lone surrogate) cannot be stored")
