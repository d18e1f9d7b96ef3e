"""A vector index of identity keys: exact numpy search up to a size, then HNSW (hnswlib).

Exact search runs its matrix-vector product with BLAS limited to one thread: on this
shared 2-core machine a multi-threaded gemv over 10k keys took ~12 ms (threads waiting
on each other) against ~0.3 ms single-threaded. The HNSW graph is built once when the
index first crosses `ann_min_keys` and then updated in place (new keys added, removed
keys marked deleted), labelled by key id, so enrolling a user never rebuilds it.

One index per modality. Face keys (dlib) are compared by L2 distance, voice keys
(resemblyzer, L2-normalised) by cosine similarity; `search` returns, per user, the
best key's value, best first. Exact search is a single matrix product and stays
under a few ms to ~50k keys; `bench face` measures where HNSW overtakes it
(`ann_min_keys`). Thread-safe: one lock guards the arrays and the HNSW graph.

`KeySearch` is what the identifier needs from an index of keys; KeyIndex holds the keys
in the process, `StoreKeyIndex` (store_index.py) asks the database for them instead.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol

import numpy as np

from egomem.errors import InputError

Metric = Literal["l2", "cosine"]
ANN_MIN_KEYS = 10_000  # measured: exact 1.9 ms at 10k keys, 38 ms at 30k; HNSW 0.4 ms (docs/benchmarks/identity.md)
_blas_controller: Any = None


@contextlib.contextmanager
def single_thread_blas() -> Iterator[None]:
    global _blas_controller
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # without threadpoolctl, BLAS keeps its default threads
        yield
        return
    if _blas_controller is None:
        _blas_controller = ThreadpoolController()
    with _blas_controller.limit(limits=1, user_api="blas"):
        yield


@dataclass(frozen=True)
class Hit:
    user_id: str
    key_id: int
    value: float  # L2 distance (lower is closer) or cosine similarity (higher is closer)


def prep_vector(v: Any, dim: int, metric: Metric) -> np.ndarray:
    """The vector as float32 (unit length for cosine), or InputError for a wrong size, NaN or zero."""
    a = np.asarray(v, dtype=np.float32).reshape(-1)
    if a.size != dim:
        raise InputError(f"vector has dimension {a.size}, index expects {dim}")
    if not np.all(np.isfinite(a)):
        raise InputError("vector contains NaN or infinite values")
    if metric == "cosine":
        n = float(np.linalg.norm(a))
        if n == 0:
            raise InputError("zero vector cannot be compared by cosine")
        a = a / n
    return a


def closest_first(values: np.ndarray, metric: Metric) -> np.ndarray:
    """Sort keys for `values`: ascending order is closest first (L2 small, cosine large)."""
    return -values if metric == "cosine" else values


class KeySearch(Protocol):
    """The identity keys of one modality, as the identifier searches them."""

    # True: the index holds the keys itself and is filled from the store (sync); False: it reads the store.
    holds_keys: ClassVar[bool]
    dim: int
    metric: Metric

    def __len__(self) -> int: ...
    @property
    def user_ids(self) -> set[str]: ...
    def prep(self, v: Any) -> np.ndarray: ...
    def search(self, query: Any, k_users: int = 5) -> list[Hit]: ...
    def keys_of(self, user_id: str) -> list[tuple[int, np.ndarray]]: ...
    def top_values(self, query: Any, n: int, exclude_user: str | None = None) -> np.ndarray:
        """The query's `n` closest values against the keys of every user but `exclude_user`, closest first."""
        ...

    def has_users(self, n: int) -> bool:
        """At least `n` distinct users have keys."""
        ...

    def version(self) -> object:
        """Changes whenever keys are added (or, in process, removed): what caches of derived statistics check."""
        ...

    def add(self, user_id: str, key_id: int, vector: Any) -> None: ...
    def add_many(self, items: list[tuple[str, int, Any]]) -> None: ...
    def remove_keys(self, key_ids: set[int]) -> int: ...
    def remove_user(self, user_id: str) -> int: ...
    def clear(self) -> None: ...


class KeyIndex:
    holds_keys: ClassVar[bool] = True

    def __init__(self, dim: int, metric: Metric, *, ann_min_keys: int = ANN_MIN_KEYS) -> None:
        self.dim = dim
        self.metric = metric
        self.ann_min_keys = ann_min_keys
        self._lock = threading.RLock()
        self._vectors = np.zeros((0, dim), dtype=np.float32)
        self._key_ids: list[int] = []
        self._users: list[str] = []
        self._ann: Any = None  # hnswlib.Index labelled by key id; built when first needed
        self._pos: dict[int, int] = {}  # key id -> row, for mapping ANN labels back
        self._version = 0  # bumped by every change
        self._users_arr: np.ndarray | None = None  # self._users as an array, for masks (rebuilt after changes)

    def __len__(self) -> int:
        return len(self._key_ids)

    @property
    def user_ids(self) -> set[str]:
        with self._lock:
            return set(self._users)

    def keys_of(self, user_id: str) -> list[tuple[int, np.ndarray]]:
        with self._lock:
            return [
                (k, self._vectors[i].copy())
                for i, (k, u) in enumerate(zip(self._key_ids, self._users, strict=True))
                if u == user_id
            ]

    def vectors(self) -> tuple[np.ndarray, list[str]]:
        with self._lock:
            return self._vectors.copy(), list(self._users)

    def has_users(self, n: int) -> bool:
        with self._lock:
            return len(set(self._users)) >= n

    def version(self) -> object:
        return self._version

    def _changed(self) -> None:
        self._version += 1
        self._users_arr = None

    def prep(self, v: Any) -> np.ndarray:
        return prep_vector(v, self.dim, self.metric)

    def add(self, user_id: str, key_id: int, vector: Any) -> None:
        self.add_many([(user_id, key_id, vector)])

    def add_many(self, items: list[tuple[str, int, Any]]) -> None:
        if not items:
            return
        vecs = np.stack([self.prep(v) for _, _, v in items])
        with self._lock:
            self._vectors = np.concatenate([self._vectors, vecs])
            self._key_ids += [int(k) for _, k, _ in items]
            self._users += [u for u, _, _ in items]
            self._pos = {k: i for i, k in enumerate(self._key_ids)}
            self._changed()
            if self._ann is not None:
                need = self._ann.get_current_count() + len(items)
                if need > self._ann.get_max_elements():
                    self._ann.resize_index(max(need, 2 * self._ann.get_max_elements()))
                self._ann.add_items(vecs, np.array([int(k) for _, k, _ in items], dtype=np.int64))

    def remove_keys(self, key_ids: set[int]) -> int:
        with self._lock:
            keep = [i for i, k in enumerate(self._key_ids) if k not in key_ids]
            removed = len(self._key_ids) - len(keep)
            if removed:
                self._vectors = self._vectors[keep]
                self._key_ids = [self._key_ids[i] for i in keep]
                self._users = [self._users[i] for i in keep]
                self._pos = {k: i for i, k in enumerate(self._key_ids)}
                self._changed()
                if self._ann is not None:
                    for k in key_ids:
                        with contextlib.suppress(RuntimeError):  # not in the graph
                            self._ann.mark_deleted(int(k))
            return removed

    def remove_user(self, user_id: str) -> int:
        with self._lock:
            return self.remove_keys({k for k, u in zip(self._key_ids, self._users, strict=True) if u == user_id})

    def clear(self) -> None:
        with self._lock:
            self._vectors = np.zeros((0, self.dim), dtype=np.float32)
            self._key_ids, self._users = [], []
            self._pos = {}
            self._ann = None
            self._changed()

    def raw_values(self, query: Any) -> np.ndarray:
        """The query's value against every key, in index order (exact)."""
        q = self.prep(query)
        with self._lock, single_thread_blas():
            return self._values(self._vectors, q)

    def top_values(self, query: Any, n: int, exclude_user: str | None = None) -> np.ndarray:
        """Exact: the `n` closest values over every key of the other users."""
        q = self.prep(query)
        with self._lock, single_thread_blas():
            vals = self._values(self._vectors, q)
            if exclude_user is not None:
                if self._users_arr is None:
                    self._users_arr = np.asarray(self._users, dtype=object)
                vals = vals[self._users_arr != exclude_user]
        if vals.size > n:
            vals = vals[np.argpartition(closest_first(vals, self.metric), n - 1)[:n]]
        return vals[np.argsort(closest_first(vals, self.metric), kind="stable")]

    def _values(self, vecs: np.ndarray, q: np.ndarray) -> np.ndarray:
        if self.metric == "cosine":
            return vecs @ q
        return np.sqrt(np.maximum(np.einsum("ij,ij->i", vecs, vecs) - 2 * (vecs @ q) + float(q @ q), 0.0))

    def search(self, query: Any, k_users: int = 5) -> list[Hit]:
        """Best key per user for the `k_users` closest users, best first."""
        q = self.prep(query)
        with self._lock:
            n = len(self._key_ids)
            if n == 0:
                return []
            if n >= self.ann_min_keys:
                idx, vals = self._ann_search(q, min(n, max(4 * k_users, 32)))
            else:
                with single_thread_blas():
                    all_vals = self._values(self._vectors, q)
                m = min(n, max(8 * k_users, 64))
                key = closest_first(all_vals, self.metric)
                idx = np.argpartition(key, m - 1)[:m] if n > m else np.arange(n)
                idx = idx[np.argsort(key[idx])]
                vals = all_vals[idx]
            hits: dict[str, Hit] = {}
            for i, v in zip(idx.tolist(), vals.tolist(), strict=True):
                u = self._users[i]
                if u not in hits:
                    hits[u] = Hit(u, self._key_ids[i], float(v))
                if len(hits) >= k_users:
                    break
            return list(hits.values())

    def _ann_search(self, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        if self._ann is None:
            import hnswlib

            ann = hnswlib.Index(space="ip" if self.metric == "cosine" else "l2", dim=self.dim)
            ann.init_index(max_elements=2 * len(self._key_ids), ef_construction=100, M=16, allow_replace_deleted=False)
            ann.set_num_threads(1)
            ann.add_items(self._vectors, np.array(self._key_ids, dtype=np.int64))
            self._ann = ann
        self._ann.set_ef(max(64, k))
        labels, dists = self._ann.knn_query(q[None, :], k=min(k, len(self._key_ids)))
        idx = np.array([self._pos[int(lab)] for lab in labels[0]], dtype=np.int64)
        # hnswlib returns 1 - dot for "ip" and squared L2 for "l2".
        vals = 1.0 - dists[0] if self.metric == "cosine" else np.sqrt(np.maximum(dists[0], 0.0))
        return idx, vals.astype(np.float64)
