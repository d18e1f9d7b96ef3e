"""A vector index of identity keys: exact numpy search up to a size, then HNSW (hnswlib).

One index per modality. Face keys (dlib) are compared by L2 distance, voice keys
(resemblyzer, L2-normalised) by cosine similarity; `search` returns, per user, the
best key's value, best first. Exact search is a single matrix product and stays
under a few ms to ~50k keys; `bench face` measures where HNSW overtakes it
(`ann_min_keys`). Thread-safe: one lock guards the arrays and the HNSW graph.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from egomem.errors import InputError

Metric = Literal["l2", "cosine"]
ANN_MIN_KEYS = 50_000  # below this, brute force is as fast or faster (see docs/benchmarks/identity.md)


@dataclass(frozen=True)
class Hit:
    user_id: str
    key_id: int
    value: float  # L2 distance (lower is closer) or cosine similarity (higher is closer)


class KeyIndex:
    def __init__(self, dim: int, metric: Metric, *, ann_min_keys: int = ANN_MIN_KEYS) -> None:
        self.dim = dim
        self.metric = metric
        self.ann_min_keys = ann_min_keys
        self._lock = threading.RLock()
        self._vectors = np.zeros((0, dim), dtype=np.float32)
        self._key_ids: list[int] = []
        self._users: list[str] = []
        self._ann: Any = None  # hnswlib.Index, rebuilt lazily when dirty
        self._ann_dirty = True

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

    def prep(self, v: Any) -> np.ndarray:
        """The vector as float32 (unit length for cosine), or InputError for a wrong size, NaN or zero."""
        a = np.asarray(v, dtype=np.float32).reshape(-1)
        if a.size != self.dim:
            raise InputError(f"vector has dimension {a.size}, index expects {self.dim}")
        if not np.all(np.isfinite(a)):
            raise InputError("vector contains NaN or infinite values")
        if self.metric == "cosine":
            n = float(np.linalg.norm(a))
            if n == 0:
                raise InputError("zero vector cannot be compared by cosine")
            a = a / n
        return a

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
            self._ann_dirty = True

    def remove_keys(self, key_ids: set[int]) -> int:
        with self._lock:
            keep = [i for i, k in enumerate(self._key_ids) if k not in key_ids]
            removed = len(self._key_ids) - len(keep)
            if removed:
                self._vectors = self._vectors[keep]
                self._key_ids = [self._key_ids[i] for i in keep]
                self._users = [self._users[i] for i in keep]
                self._ann_dirty = True
            return removed

    def remove_user(self, user_id: str) -> int:
        with self._lock:
            return self.remove_keys({k for k, u in zip(self._key_ids, self._users, strict=True) if u == user_id})

    def clear(self) -> None:
        with self._lock:
            self._vectors = np.zeros((0, self.dim), dtype=np.float32)
            self._key_ids, self._users = [], []
            self._ann_dirty = True

    def raw_values(self, query: Any) -> np.ndarray:
        """The query's value against every key, in index order (exact)."""
        q = self.prep(query)
        with self._lock:
            return self._values(self._vectors, q)

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
                all_vals = self._values(self._vectors, q)
                m = min(n, max(8 * k_users, 64))
                order = np.argsort(-all_vals if self.metric == "cosine" else all_vals)
                idx = order[:m] if n > m else order
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
        if self._ann is None or self._ann_dirty:
            import hnswlib

            ann = hnswlib.Index(space="ip" if self.metric == "cosine" else "l2", dim=self.dim)
            ann.init_index(max_elements=len(self._key_ids), ef_construction=100, M=16)
            ann.set_num_threads(1)
            ann.add_items(self._vectors, np.arange(len(self._key_ids)))
            ann.set_ef(max(64, k))
            self._ann, self._ann_dirty = ann, False
        labels, dists = self._ann.knn_query(q[None, :], k=k)
        idx = labels[0].astype(np.int64)
        # hnswlib returns 1 - dot for "ip" and squared L2 for "l2".
        vals = 1.0 - dists[0] if self.metric == "cosine" else np.sqrt(np.maximum(dists[0], 0.0))
        return idx, vals.astype(np.float64)
