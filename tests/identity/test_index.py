"""KeyIndex: exact and HNSW search agree; removal; bad vectors."""

from __future__ import annotations

import numpy as np
import pytest

from egomem.errors import InputError
from egomem.identity.index import KeyIndex


def _items(n: int, dim: int, seed: int = 0) -> list[tuple[str, int, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [(f"u{i // 2}", i, rng.standard_normal(dim).astype(np.float32)) for i in range(n)]


@pytest.mark.parametrize("metric", ["l2", "cosine"])
def test_exact_and_hnsw_agree_on_the_best_user(metric: str) -> None:
    items = _items(2000, 32)
    exact, ann = KeyIndex(32, metric, ann_min_keys=10**9), KeyIndex(32, metric, ann_min_keys=1)  # type: ignore[arg-type]
    exact.add_many(items)
    ann.add_many(items)
    rng = np.random.default_rng(1)
    agree = 0
    for _ in range(20):
        q = items[int(rng.integers(len(items)))][2] + 0.05 * rng.standard_normal(32)
        e, a = exact.search(q, 3), ann.search(q, 3)
        agree += e[0].user_id == a[0].user_id
        assert e[0].value == pytest.approx(a[0].value, abs=1e-3) or e[0].user_id != a[0].user_id
    assert agree >= 19


def test_best_key_per_user_and_removal() -> None:
    idx = KeyIndex(2, "l2")
    idx.add_many([("a", 1, [0, 0]), ("a", 2, [1, 0]), ("b", 3, [3, 0])])
    hits = idx.search([0.9, 0], 5)
    assert [(h.user_id, h.key_id) for h in hits] == [("a", 2), ("b", 3)]
    assert hits[0].value == pytest.approx(0.1, abs=1e-6)
    assert idx.remove_user("a") == 2
    assert [h.user_id for h in idx.search([0, 0], 5)] == ["b"]
    assert KeyIndex(2, "l2").search([0, 0]) == []


def test_bad_vectors_raise() -> None:
    idx = KeyIndex(3, "cosine")
    for bad in ([1, 2], [np.nan, 0, 0], [0, 0, 0]):
        with pytest.raises(InputError):
            idx.add("u", 1, bad)
