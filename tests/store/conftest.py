"""Every store test runs on each backend: SQLite always, PostgreSQL (marker `postgres`)
when EGOMEM_TEST_PG_DSN names a server (`bash scripts/postgres.sh` starts one and prints it).

Each PostgreSQL test gets its own schema, dropped afterwards, so tests never see each
other's rows and the database needs no cleaning between runs.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from egomem.store.base import MemoryStore
from egomem.store.sqlite import SQLiteStore

PG_DSN = os.environ.get("EGOMEM_TEST_PG_DSN", "")

StoreFactory = Callable[[], MemoryStore]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest) -> str:
    if request.param == "postgres" and not PG_DSN:
        pytest.skip("EGOMEM_TEST_PG_DSN is not set (bash scripts/postgres.sh prints one)")
    return str(request.param)


@pytest.fixture
def store_spec(backend: str, tmp_path: Path) -> Iterator[str]:
    """Where the test's store lives, as `sqlite:PATH` or `postgres:SCHEMA` (see open_spec)."""
    if backend == "sqlite":
        yield f"sqlite:{tmp_path / 'memory.db'}"
        return
    yield from (f"postgres:{name}" for name in _fresh_schema())


def _fresh_schema() -> Iterator[str]:
    """A new PostgreSQL schema name for one test; the schema is dropped afterwards."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    yield name
    import psycopg
    from psycopg import sql

    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))


@pytest.fixture
def schema() -> Iterator[str]:
    """A PostgreSQL schema of the test's own (tests that open PostgresStore themselves)."""
    yield from _fresh_schema()


def open_spec(spec: str) -> MemoryStore:
    kind, where = spec.split(":", 1)
    if kind == "sqlite":
        return SQLiteStore(where)
    from egomem.store.postgres import PostgresStore

    return PostgresStore(PG_DSN, schema=where)


@pytest.fixture
def store_factory(store_spec: str) -> Iterator[StoreFactory]:
    """Opens (again) the test's store; every store it opened is closed at the end."""
    opened: list[MemoryStore] = []

    def factory() -> MemoryStore:
        opened.append(open_spec(store_spec))
        return opened[-1]

    yield factory
    for s in opened:
        s.close()


@pytest.fixture
def store(store_factory: StoreFactory) -> MemoryStore:
    return store_factory()


def all_rows_text(store: SQLiteStore | MemoryStore) -> str:
    """Every cell of every table, as text (bytes and vectors as float32 hex), to scan for a deleted person."""
    out: list[str] = []
    for table in store.table_names():  # type: ignore[union-attr]
        for row in store.dump_table(table):  # type: ignore[union-attr]
            for c in row:
                if isinstance(c, bytes | memoryview):
                    out.append(bytes(c).hex())
                elif hasattr(c, "to_numpy"):  # a pgvector column
                    out.append(np.asarray(c.to_numpy(), dtype="<f4").tobytes().hex())
                else:
                    out.append(str(c))
    return "\n".join(out)
