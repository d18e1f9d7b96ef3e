"""What each backend says it can do, the per-entity operations behind the facade, building
stores from provider configs, and no SQL rewriting anywhere in the store."""

from __future__ import annotations

import ast
import dataclasses
import uuid
from pathlib import Path

import numpy as np
import pytest

import egomem.store
from egomem.errors import ConfigError, StoreError
from egomem.providers import BuildContext, PostgresStoreConfig, SQLiteStoreConfig
from egomem.schemas import Fact, Modality
from egomem.store.base import MemoryStore
from egomem.store.capabilities import StoreCapabilities
from egomem.store.sqlite import SQLiteStore

from .conftest import PG_DSN


def test_capabilities_per_backend(store: MemoryStore, backend: str) -> None:
    caps = store.capabilities
    assert isinstance(caps, StoreCapabilities)
    if backend == "sqlite":
        assert caps == StoreCapabilities(
            native_vector_search=False, vector_index=False, concurrent_writers=False, bulk_copy=False
        )
    else:
        assert caps == StoreCapabilities(
            native_vector_search=True, vector_index=True, concurrent_writers=True, bulk_copy=True
        )
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(caps, "native_vector_search", not caps.native_vector_search)  # noqa: B010


def test_entity_operations_share_one_transaction(store: MemoryStore) -> None:
    with pytest.raises(RuntimeError), store.transaction():
        u = store.users.create("Half")
        store.facts.add(Fact(user_id=u.id, text="never committed"))
        store.keys.add(u.id, Modality.FACE, np.ones(128), "dlib_resnet_v1")
        raise RuntimeError("crash mid-write")
    assert store.users.all() == [] and store.log.entries() == []
    u = store.users.create("Ana")
    fact = store.facts.add(Fact(user_id=u.id, text="likes tea"))
    assert store.get_fact(fact.id) == store.facts.get(fact.id)  # the facade delegates to the same operations
    assert [h.entity for h in store.history(u.id)] == ["user", "fact"]


def test_bulk_copy_then_vector_indexes_rebuilt(store: MemoryStore) -> None:
    u = store.create_user("Bulk")
    vectors = np.eye(128, dtype=np.float32)[:3]
    cols = ["user_id", "modality", "model", "dim", "vector", "condition", "created_at"]
    rows: list[tuple[object, ...]] = [(u.id, "face", "dlib_resnet_v1", 128, v.tobytes(), "", 1.0) for v in vectors]
    if store.capabilities.native_vector_search:
        cols.append("embedding")
        rows = [(*row, v) for row, v in zip(rows, vectors, strict=True)]
    if store.capabilities.vector_index:
        store.drop_vector_indexes()
    assert store.copy_rows("identity_keys", cols, rows) == 3
    if store.capabilities.vector_index:
        store.create_vector_indexes()
    assert [m.key_id for m in store.nearest_keys(Modality.FACE, vectors[1], 1)] == [store.list_keys()[1].id]
    assert store.history(u.id)[-1].entity == "user"  # a bulk load writes no history


def test_sqlite_from_config_lives_in_the_data_dir(tmp_path: Path) -> None:
    store = SQLiteStore.from_config(SQLiteStoreConfig(busy_timeout_ms=250), BuildContext(data_dir=tmp_path))
    try:
        store.create_user("Emily")
        assert store.path == tmp_path / "memory.db" and store.path.exists()
    finally:
        store.close()


def test_postgres_from_config_needs_a_dsn(tmp_path: Path) -> None:
    pytest.importorskip("psycopg")
    from egomem.store.postgres import PostgresStore

    with pytest.raises(ConfigError, match=r"store\.dsn"):
        PostgresStore.from_config(PostgresStoreConfig(dsn=" "), BuildContext(data_dir=tmp_path))


@pytest.mark.postgres
@pytest.mark.skipif(not PG_DSN, reason="EGOMEM_TEST_PG_DSN is not set")
def test_a_missing_hnsw_index_is_built_when_the_store_opens() -> None:
    from egomem.store.hnsw import index_name, indexed_encoders
    from egomem.store.postgres import PostgresStore

    schema = f"t_{uuid.uuid4().hex[:12]}"
    names = {index_name(spec) for spec in indexed_encoders()}
    assert names >= {"identity_keys_face_hnsw", "identity_keys_voice_hnsw"}
    store = PostgresStore(PG_DSN, schema=schema)
    try:
        store.drop_vector_indexes()
        assert not names & set(_index_names(store))
        store.close()
        store = PostgresStore(PG_DSN, schema=schema)
        assert names <= set(_index_names(store))
    finally:
        store.drop_schema()


def _index_names(store: MemoryStore) -> list[str]:
    return [i["name"] for i in store.db.inspect(lambda inspector: inspector.get_indexes("identity_keys"))]


def test_no_module_under_store_uses_re() -> None:
    """SQL is built by SQLAlchemy for each dialect; nothing in the store rewrites SQL text."""
    root = Path(egomem.store.__file__).parent
    offenders = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            module = node.module if isinstance(node, ast.ImportFrom) else None
            if "re" in names or "regex" in names or module in ("re", "regex"):
                offenders.append(str(path.relative_to(root)))
    assert len(list(root.rglob("*.py"))) > 10  # the scan saw the package
    assert offenders == []


def test_postgres_config_reaches_the_store(tmp_path: Path) -> None:
    # ef_search is checked before any connection is made, so no server is needed.
    pytest.importorskip("psycopg")
    from egomem.store.postgres import PostgresStore

    cfg = PostgresStoreConfig(dsn="postgresql://u@127.0.0.1:1/db", ef_search=5000)
    with pytest.raises(StoreError, match="ef_search"):
        PostgresStore.from_config(cfg, BuildContext(data_dir=tmp_path))
