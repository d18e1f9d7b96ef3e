"""The nearest-keys query identification runs on every poll (store/hnsw.py nearest_sql): one round trip,
binary query vector, through the encoder's HNSW index even as a prepared (generic) plan."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import numpy as np
import pytest
import sqlalchemy as sa

from egomem.encoders import encoder
from egomem.errors import DimensionError
from egomem.schemas import Modality

from .conftest import PG_DSN

psycopg = pytest.importorskip("psycopg")

from pgvector import Vector  # noqa: E402
from sqlalchemy import event  # noqa: E402

from egomem.store.hnsw import nearest_sql, nearest_statement  # noqa: E402
from egomem.store.postgres import PostgresStore  # noqa: E402

pytestmark = [pytest.mark.postgres, pytest.mark.skipif(not PG_DSN, reason="EGOMEM_TEST_PG_DSN is not set")]


@pytest.fixture
def pg() -> Iterator[PostgresStore]:
    s = PostgresStore(PG_DSN, schema=f"t_{uuid.uuid4().hex[:12]}")
    yield s
    s.drop_schema()


def _enrol(pg: PostgresStore, n: int, rng: np.random.Generator) -> np.ndarray:
    vecs = rng.normal(0, 0.2, (n, 128)).astype(np.float32)
    with pg.transaction():
        for i, v in enumerate(vecs):
            pg.add_key(pg.create_user(f"p{i}").id, Modality.FACE, v, "dlib_resnet_v1")
    return vecs


def test_nearest_sql_matches_the_sqlalchemy_statement_in_one_round_trip(pg: PostgresStore) -> None:
    rng = np.random.default_rng(3)
    vecs = _enrol(pg, 40, rng)
    q = vecs[7] + rng.normal(0, 0.01, 128).astype(np.float32)
    want = pg.db.fetch(nearest_statement(Modality.FACE, "dlib_resnet_v1", "<->", q, 5))
    statements: list[str] = []
    event.listen(pg.db.engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    got = pg.nearest_keys(Modality.FACE, q, 5)
    assert len(statements) == 1 and "%(query)b" in statements[0]  # no stored-dimension query, binary vector
    assert [m.key_id for m in got] == [int(r["id"]) for r in want]
    assert [m.distance for m in got] == pytest.approx([float(r["distance"]) for r in want], abs=1e-5)


def test_nearest_sql_uses_the_hnsw_index_as_a_generic_plan(pg: PostgresStore) -> None:
    """psycopg prepares a statement run five times; PostgreSQL may then plan it once for any query vector."""
    _enrol(pg, 20, np.random.default_rng(4))
    sql = nearest_sql(encoder("dlib_resnet_v1"), 32)
    assert "LIMIT 32" in sql  # a literal: a generic plan still knows it wants 32 rows
    with pg.transaction():
        pg.db.execute(sa.text("SET LOCAL enable_seqscan = off"))  # a tiny table would otherwise be scanned
        pg.db.execute(sa.text("SET LOCAL plan_cache_mode = force_generic_plan"))
        rows = pg.db.fetch_sql("EXPLAIN " + sql, {"query": Vector(np.ones(128, np.float32))})
    assert "Index Scan using identity_keys_face_hnsw" in "\n".join(str(r[0]) for r in rows)


def test_wrong_size_query_is_refused_and_an_empty_store_gives_nothing(pg: PostgresStore) -> None:
    assert pg.nearest_keys(Modality.FACE, np.ones(128), 5) == []  # no keys yet
    assert pg.nearest_keys(Modality.FACE, np.ones(64), 5) == []  # no keys: nothing to compare with
    _enrol(pg, 3, np.random.default_rng(5))
    with pytest.raises(DimensionError, match="128"):
        pg.nearest_keys(Modality.FACE, np.ones(64), 5)
    assert len(pg.nearest_keys(Modality.FACE, np.ones(128), 5)) == 3  # the store is untouched


def test_a_search_for_more_keys_than_ef_search_gets_them_in_order() -> None:
    """The s-norm cohort asks for top_n + 32 keys, more than ef_search: the scan goes on (iterative scan)."""
    pg = PostgresStore(PG_DSN, schema=f"t_{uuid.uuid4().hex[:12]}", ef_search=10)
    try:
        vecs = _enrol(pg, 60, np.random.default_rng(6))
        got = pg.nearest_keys(Modality.FACE, vecs[0], 45)
        assert len(got) == 45
        dists = [m.distance for m in got]
        assert dists == sorted(dists) and dists[0] == pytest.approx(0.0, abs=1e-6)
    finally:
        pg.drop_schema()
