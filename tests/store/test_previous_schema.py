"""Databases made by the previous store code (schema 1: SQL migration files, regex-translated for
PostgreSQL) open with everything in them, upgraded to the newest schema (2: evidence weights, the
existing items' origin episodes copied into `evidence`), and a fresh database gets the same schema
as an upgraded one."""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path

import numpy as np
import pytest

from egomem.schemas import Modality, Op
from egomem.store.migrations import NEWEST
from egomem.store.sqlite import SQLiteStore

from .conftest import PG_DSN

DATA = Path(__file__).parent / "data"
FACE = np.linspace(-1, 1, 128).astype(np.float32)

# One row per table, as the previous code wrote them (placeholders in the portable `?` style).
ROWS = [
    ("INSERT INTO users VALUES (?, ?, ?, ?, ?)", ("u_emily", "Emily", 0, 10.0, 20.0)),
    ("INSERT INTO users VALUES (?, ?, ?, ?, ?)", ("u_john", "John", 1, 11.0, None)),
    (
        "INSERT INTO identity_keys (user_id, modality, model, dim, vector, condition, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        ("u_emily", "face", "dlib_resnet_v1", 128, FACE.astype("<f4").tobytes(), "clean", 12.0),
    ),
    (
        "INSERT INTO episodes VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        ("e_1", 1.0, 9.0, "hi", "hello", "greeting", "done", 13.0),
    ),
    ("INSERT INTO episode_participants VALUES (?, ?)", ("e_1", "u_emily")),
    (
        "INSERT INTO facts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        ("f_1", "u_emily", "fact", "is a nurse", 0.9, "e_1", "I am a nurse", 14.0, 14.0, None, None, 0.7, 2, 15.0),
    ),
    (
        "INSERT INTO relations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        ("r_1", "u_emily", "colleague", "u_john", None, "e_1", 16.0, 16.0, None),
    ),
    (
        "INSERT INTO history (at, op, entity, entity_id, user_id, other_user_id, before_json, after_json, cause)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (17.0, "ADD", "fact", "f_1", "u_emily", None, None, '{"text": "is a nurse"}', "extractor"),
    ),
]


def _check_everything_is_there(store: SQLiteStore | object) -> None:
    from egomem.store.base import MemoryStore

    assert isinstance(store, MemoryStore)
    assert store.schema_version() == NEWEST == 6  # 5: keys sealed at rest; 6: memory_jobs
    emily = store.get_user("u_emily")
    assert (emily.name, emily.placeholder, emily.last_seen) == ("Emily", False, 20.0)
    assert store.get_user("u_john").placeholder is True
    [key] = store.list_keys(Modality.FACE)
    assert key.user_id == "u_emily" and key.condition == "clean"
    np.testing.assert_array_equal(np.asarray(key.vector, np.float32), FACE)
    [fact] = store.list_facts("u_emily")
    assert (fact.text, fact.source_episode, fact.importance, fact.use_count) == ("is a nurse", "e_1", 0.7, 2)
    # Schema 3: provenance beyond the episode was not recorded then.
    assert (fact.source_turns, fact.identity_status, fact.identity_llr) == (None, None, None)
    # Schema 2: support 1, and the origin episode as the first evidence row.
    [origin] = store.fact_evidence("f_1")
    assert (fact.support, origin.episode_id, origin.sign, origin.at, origin.source_text) == (
        1,
        "e_1",
        1,
        14.0,
        "I am a nurse",
    )
    # Schema 4 (privacy): facts learnt before it were never classified; no consent events.
    assert fact.sensitivity == "none" and store.consent_events("u_emily") == []
    [edge] = store.list_relations("u_john")
    assert (edge.subject_id, edge.relation, edge.support) == ("u_emily", "colleague", 1)
    assert [(e.episode_id, e.sign) for e in store.relation_evidence("r_1")] == [("e_1", 1)]
    [episode] = store.list_episodes("u_emily")
    assert (episode.summary, episode.participants) == ("greeting", ["u_emily"])
    [entry] = store.history("u_emily")
    assert entry.op == Op.ADD and entry.after == {"text": "is a nurse"}
    # ... and the upgraded rows take new evidence.
    assert store.confirm_fact("f_1", episode_id="e_1", at=18.0, cause="test").support == 2
    assert [m.user_id for m in store.nearest_keys(Modality.FACE, FACE + 0.01, 1)] == ["u_emily"]
    # ... and it takes new memory on top.
    store.add_key("u_john", Modality.FACE, -FACE, "dlib_resnet_v1")
    assert [m.user_id for m in store.nearest_keys(Modality.FACE, -FACE, 1)] == ["u_john"]
    report = store.delete_user("u_emily")
    assert report.removed["facts"] == 1 and report.removed["episodes"] == 1 and report.removed["evidence"] == 3


def test_sqlite_store_from_the_previous_schema_opens_with_its_data(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    conn = sqlite3.connect(path)
    conn.executescript((DATA / "0001_initial.sql").read_text())
    for sql, params in ROWS:
        conn.execute(sql, params)
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    store = SQLiteStore(path)
    try:
        _check_everything_is_there(store)
    finally:
        store.close()


def _sqlite_schema(path: Path) -> dict[str, object]:
    conn = sqlite3.connect(path)
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    out: dict[str, object] = {t: list(conn.execute(f"PRAGMA table_info({t})")) for t in tables}
    out["indexes"] = sorted(
        (r[0], r[1]) for r in conn.execute("SELECT name, tbl_name FROM sqlite_master WHERE type = 'index'")
    )
    out["foreign keys"] = {t: sorted(conn.execute(f"PRAGMA foreign_key_list({t})")) for t in tables}
    conn.close()
    return out


def test_fresh_sqlite_schema_equals_the_upgraded_previous_one(tmp_path: Path) -> None:
    old = tmp_path / "old.db"
    conn = sqlite3.connect(old)
    conn.executescript((DATA / "0001_initial.sql").read_text())
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    SQLiteStore(old).close()  # upgrades 1 -> NEWEST
    SQLiteStore(tmp_path / "new.db").close()
    old_schema, new_schema = _sqlite_schema(old), _sqlite_schema(tmp_path / "new.db")
    assert old_schema.keys() == new_schema.keys()
    for name in old_schema:
        assert new_schema[name] == old_schema[name], name


# -- PostgreSQL ----------------------------------------------------------------------------------
needs_pg = [pytest.mark.postgres, pytest.mark.skipif(not PG_DSN, reason="EGOMEM_TEST_PG_DSN is not set")]


def _pg_literal_rows() -> list[tuple[str, tuple[object, ...]]]:
    """ROWS in psycopg's placeholder style, identity keys with their pgvector copy."""
    out: list[tuple[str, tuple[object, ...]]] = []
    for sql, params in ROWS:
        if sql.startswith("INSERT INTO identity_keys"):
            sql = sql.replace("created_at)", "created_at, embedding)").replace("?)", "?, ?::vector)")
            params = (*params, "[" + ",".join(str(float(x)) for x in FACE) + "]")
        out.append((sql.replace("?", "%s"), params))
    return out


@pytest.fixture
def old_pg_schema() -> object:
    psycopg = pytest.importorskip("psycopg")
    from psycopg import sql

    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        conn.execute(sql.SQL("SET search_path TO {}, public").format(sql.Identifier(schema)))
        conn.execute((DATA / "0001_initial_pg.sql").read_text())  # no parameters: a multi-statement script
        conn.execute("CREATE TABLE egomem_schema (version INTEGER NOT NULL)")
        conn.execute("INSERT INTO egomem_schema (version) VALUES (1)")
    yield schema
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@needs_pg[0]
@needs_pg[1]
def test_postgres_store_from_the_previous_schema_opens_with_its_data(old_pg_schema: str) -> None:
    import psycopg
    from psycopg import sql

    from egomem.store.postgres import PostgresStore

    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(sql.SQL("SET search_path TO {}, public").format(sql.Identifier(old_pg_schema)))
        for statement, params in _pg_literal_rows():
            conn.execute(statement, params)
    store = PostgresStore(PG_DSN, schema=old_pg_schema)
    try:
        _check_everything_is_there(store)
    finally:
        store.close()


def _pg_schema(schema: str) -> dict[str, object]:
    import psycopg

    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        columns = conn.execute(
            "SELECT table_name, column_name, data_type, is_nullable, column_default, is_identity"
            " FROM information_schema.columns WHERE table_schema = %s ORDER BY table_name, ordinal_position",
            (schema,),
        ).fetchall()
        indexes = conn.execute(
            "SELECT indexname, replace(indexdef, %s, '') FROM pg_indexes WHERE schemaname = %s ORDER BY indexname",
            (f" {schema}.", schema),
        ).fetchall()
        checks = conn.execute(
            "SELECT conrelid::regclass::text, pg_get_constraintdef(oid) FROM pg_constraint"
            " WHERE connamespace = %s::regnamespace ORDER BY 1, 2",
            (schema,),
        ).fetchall()
    constraints = [(t.split(".")[-1], c.replace(f"{schema}.", "")) for t, c in checks]
    return {"columns": columns, "indexes": indexes, "constraints": constraints}


@needs_pg[0]
@needs_pg[1]
def test_fresh_postgres_schema_equals_the_upgraded_previous_one(old_pg_schema: str) -> None:
    from egomem.store.postgres import PostgresStore

    fresh = PostgresStore(PG_DSN, schema=f"t_{uuid.uuid4().hex[:12]}")
    try:
        PostgresStore(PG_DSN, schema=old_pg_schema).close()  # opening upgrades schema 1 -> NEWEST
        assert fresh.schema is not None
        old, new = _pg_schema(old_pg_schema), _pg_schema(fresh.schema)
        for part in old:
            assert new[part] == old[part], part
    finally:
        fresh.drop_schema()
