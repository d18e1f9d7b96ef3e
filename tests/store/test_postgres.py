"""PostgreSQL driver specifics: schema parity with SQLite, the HNSW index, lost connections,
bad DSNs, several workers on one schema."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa
from sqlalchemy.ext.compiler import compiles

from egomem.config import load_config
from egomem.errors import ConfigError, StoreError
from egomem.schemas import Fact, Modality
from egomem.store import open_store
from egomem.store.sqlite import SQLiteStore

from .conftest import PG_DSN

psycopg = pytest.importorskip("psycopg")

from egomem.store.hnsw import nearest_statement  # noqa: E402
from egomem.store.postgres import PostgresStore  # noqa: E402
from egomem.store.schema import identity_keys  # noqa: E402

needs_pg = [pytest.mark.postgres, pytest.mark.skipif(not PG_DSN, reason="EGOMEM_TEST_PG_DSN is not set")]


@pytest.fixture
def pg(schema: str) -> Iterator[PostgresStore]:
    s = PostgresStore(PG_DSN, schema=schema)
    yield s
    s.close()


def _backend_pid(store: PostgresStore) -> int:
    return int(store.db.fetch(sa.text("SELECT pg_backend_pid() AS pid"))[0]["pid"])


def _terminate(pid: int) -> None:
    """What a server restart does to a client: its backend goes away."""
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        assert conn.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone() == (True,)


class Explain(sa.Executable, sa.ClauseElement):
    """EXPLAIN of a SQLAlchemy statement (the query plan, one line a row)."""

    inherit_cache = False

    def __init__(self, statement: sa.Select) -> None:
        self.statement = statement


@compiles(Explain, "postgresql")
def _explain(element: Explain, compiler: sa.sql.compiler.SQLCompiler, **kw: object) -> str:
    return "EXPLAIN " + compiler.process(element.statement, **kw)


# -- no server needed ------------------------------------------------------------------------------
def test_bad_dsns_and_schema_names_get_clear_errors() -> None:
    with pytest.raises(StoreError, match="needs a DSN"):
        PostgresStore("  ")
    with pytest.raises(StoreError, match="malformed"):
        PostgresStore("this is not a dsn")
    with pytest.raises(StoreError, match="invalid schema"):
        PostgresStore("postgresql://a@127.0.0.1/x", schema="x; DROP TABLE users")
    with pytest.raises(StoreError, match="ef_search"):
        PostgresStore("postgresql://a@127.0.0.1/x", ef_search=0)
    with pytest.raises(StoreError, match="cannot connect") as err:
        PostgresStore("postgresql://egomem:s3cret@127.0.0.1:1/egomem_test", connect_timeout_s=2)
    assert "s3cret" not in str(err.value)


def test_open_store_needs_a_dsn_for_postgres(tmp_path: Path) -> None:
    cfg = load_config(data_dir=tmp_path, environ={"EGOMEM_STORE__PROVIDER": "postgres"})
    with pytest.raises(ConfigError, match=r"store\.dsn"):
        open_store(cfg)


# -- against a server ------------------------------------------------------------------------------
@needs_pg[0]
@needs_pg[1]
def test_schema_matches_sqlite_migrations(pg: PostgresStore, tmp_path: Path) -> None:
    lite = SQLiteStore(tmp_path / "m.db")
    assert pg.schema_version() == lite.schema_version()
    conn = sqlite3.connect(tmp_path / "m.db")
    for table in lite.table_names():
        want = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
        extra = ["embedding"] if table == "identity_keys" else []
        assert sorted(pg.columns(table)) == sorted(want + extra), table
    # PostgreSQL keeps the keyring in the store's schema; SQLite in a file of its own.
    assert set(pg.table_names()) == {*lite.table_names(), "egomem_schema", "data_keys", "keyring_check"}
    lite.close()


@needs_pg[0]
@needs_pg[1]
def test_embedding_mirrors_the_portable_blob_and_hnsw_is_used(pg: PostgresStore) -> None:
    u = pg.create_user("Emily")
    v = np.linspace(-1, 1, 128).astype(np.float32)
    pg.add_key(u.id, Modality.FACE, v, "dlib_resnet_v1")
    row = pg.db.fetch(sa.select(identity_keys.c.vector, identity_keys.c.embedding, identity_keys.c.sealed))[0]
    # The portable copy is sealed (docs/privacy.md); the searchable one is plaintext for the HNSW index.
    assert row["sealed"] == 1 and v.tobytes() not in bytes(row["vector"])
    np.testing.assert_array_equal(np.asarray(pg.list_keys()[0].vector, np.float32), v)
    np.testing.assert_array_equal(np.asarray(row["embedding"], np.float32), v)  # pgvector's float4 column
    for modality, model, dim, index in (
        (Modality.FACE, "dlib_resnet_v1", 128, "identity_keys_face_hnsw"),
        (Modality.VOICE, "resemblyzer", 256, "identity_keys_voice_hnsw"),
    ):
        metric = "<->" if modality == Modality.FACE else "<=>"
        statement = nearest_statement(modality, model, metric, np.ones(dim, np.float32), 5)
        with pg.transaction():
            pg.db.execute(sa.text("SET LOCAL enable_seqscan = off"))  # a tiny table would otherwise be scanned
            plan = "\n".join(r["QUERY PLAN"] for r in pg.db.fetch(Explain(statement)))
        assert f"Index Scan using {index}" in plan


@needs_pg[0]
@needs_pg[1]
def test_lost_connection_is_a_store_error_and_the_next_call_reconnects(pg: PostgresStore) -> None:
    u = pg.create_user("Emily")
    _terminate(_backend_pid(pg))
    with pytest.raises(StoreError, match="lost the connection"):
        pg.get_user(u.id)
    assert pg.get_user(u.id).name == "Emily"  # reconnected

    # Mid-transaction: the whole transaction is gone, nothing half-written, the store works after.
    with pytest.raises(StoreError, match="lost the connection"), pg.transaction():
        half = pg.create_user("Half")
        pg.add_fact(Fact(user_id=half.id, text="never committed"))
        _terminate(_backend_pid(pg))
        pg.add_fact(Fact(user_id=half.id, text="fails"))
    assert [x.name for x in pg.list_users()] == ["Emily"]
    assert pg.rename_user(u.id, "Emily C").name == "Emily C"


@needs_pg[0]
@needs_pg[1]
def test_fleet_workers_share_one_schema(schema: str) -> None:
    stores: list[PostgresStore] = []
    errors: list[BaseException] = []

    def start() -> None:  # several workers starting at once on an empty schema: one migrates
        try:
            stores.append(PostgresStore(PG_DSN, schema=schema))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(stores) == 4
    a, b = stores[0], stores[1]
    u = a.create_user("Emily")
    a.add_key(u.id, Modality.FACE, np.ones(128), "dlib_resnet_v1")
    assert b.get_user(u.id).name == "Emily"
    assert [m.user_id for m in b.nearest_keys(Modality.FACE, np.ones(128), 1)] == [u.id]
    for s in stores:
        s.close()
    with pytest.raises(StoreError, match="closed"):
        a.list_users()


@needs_pg[0]
@needs_pg[1]
def test_open_store_selects_postgres(tmp_path: Path, schema: str) -> None:
    dsn = f"{PG_DSN}{'&' if '?' in PG_DSN else '?'}options=-csearch_path%3D{schema},public"
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    cfg = load_config(data_dir=tmp_path, environ={"EGOMEM_STORE__PROVIDER": "postgres", "EGOMEM_STORE__DSN": dsn})
    s = open_store(cfg)
    assert isinstance(s, PostgresStore)
    s.create_user("Ana")
    assert "users" in s.table_names() and s.db.fetch(sa.text("SELECT current_schema() AS s"))[0]["s"] == schema
    s.close()
