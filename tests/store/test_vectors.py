"""nearest_keys: pgvector's HNSW index on PostgreSQL, exact numpy on SQLite; same answers, same errors."""

from __future__ import annotations

import numpy as np
import pytest

from egomem.errors import DimensionError, InputError
from egomem.schemas import Modality
from egomem.store.base import MemoryStore
from egomem.store.vectors import exact_nearest, nearest_keys


def _enrol(store: MemoryStore, vectors: np.ndarray, modality: Modality, model: str) -> list[str]:
    users = []
    with store.transaction():
        for v in vectors:
            u = store.create_user()
            store.add_key(u.id, modality, v, model)
            users.append(u.id)
    return users


def test_face_search_agrees_with_exact_l2(store: MemoryStore) -> None:
    rng = np.random.default_rng(7)
    keys = rng.normal(0, 0.1, (300, 128)).astype(np.float32)
    users = _enrol(store, keys, Modality.FACE, "dlib_resnet_v1")
    stored = store.list_keys(Modality.FACE)
    matrix = np.asarray([k.vector for k in stored], dtype=np.float32)
    hits = 0
    for i in range(0, 300, 15):
        query = keys[i] + rng.normal(0, 0.01, 128).astype(np.float32)
        got = nearest_keys(store, Modality.FACE, query, k=5)
        want = exact_nearest([k.id or 0 for k in stored], [k.user_id for k in stored], matrix, query, 5, "l2")
        assert got[0].user_id == users[i] and got[0].key_id == want[0].key_id
        assert got[0].distance == pytest.approx(float(np.linalg.norm(keys[i] - query)), abs=1e-4)
        assert [m.distance for m in got] == sorted(m.distance for m in got)
        hits += len({m.key_id for m in got} & {m.key_id for m in want})
    # HNSW is approximate; at this size it should find (nearly) every true neighbour.
    assert hits / (20 * 5) >= 0.9


def test_voice_search_uses_cosine_distance(store: MemoryStore) -> None:
    a, b = np.zeros(256, np.float32), np.zeros(256, np.float32)
    a[0], b[1] = 1.0, 1.0
    ua, ub = _enrol(store, np.stack([a, b]), Modality.VOICE, "resemblyzer")
    query = a * 3 + b  # scale must not matter under cosine
    got = nearest_keys(store, Modality.VOICE, query, k=5)
    assert [m.user_id for m in got] == [ua, ub]
    assert got[0].distance == pytest.approx(1 - 3 / np.sqrt(10), abs=1e-5)
    assert got[1].distance == pytest.approx(1 - 1 / np.sqrt(10), abs=1e-5)
    assert nearest_keys(store, Modality.FACE, np.ones(128), k=3) == []  # no face keys: empty, not an error


def test_unindexed_model_is_searched_exactly(store: MemoryStore) -> None:
    vecs = np.eye(10, dtype=np.float32)
    users = _enrol(store, vecs, Modality.FACE, "custom")
    got = nearest_keys(store, Modality.FACE, vecs[3] * 0.9, k=2, model="custom")
    assert got[0].user_id == users[3] and got[0].distance == pytest.approx(0.1, abs=1e-5)
    assert len(got) == 2
    assert nearest_keys(store, Modality.FACE, vecs[3], k=2) == []  # other model: nothing


def test_bad_queries_get_clear_errors(store: MemoryStore) -> None:
    _enrol(store, np.ones((2, 128), np.float32), Modality.FACE, "dlib_resnet_v1")
    _enrol(store, np.ones((1, 256), np.float32), Modality.VOICE, "resemblyzer")
    with pytest.raises(DimensionError, match="128"):
        nearest_keys(store, Modality.FACE, np.ones(64), k=1)
    with pytest.raises(DimensionError, match="NaN"):
        nearest_keys(store, Modality.FACE, [float("nan")] * 128, k=1)
    with pytest.raises(DimensionError):
        nearest_keys(store, Modality.FACE, [], k=1)
    for bad_k in (0, -1, 2.5, True):
        with pytest.raises(InputError, match="k must be"):
            nearest_keys(store, Modality.FACE, np.ones(128), k=bad_k)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="zero vector"):
        nearest_keys(store, Modality.VOICE, np.zeros(256), k=1)
    with pytest.raises(InputError, match="modality"):
        nearest_keys(store, "smell", np.ones(128), k=1)  # type: ignore[arg-type]
    assert len(nearest_keys(store, Modality.FACE, np.ones(128), k=50)) == 2  # k beyond the store: all keys
