"""Identity keys searched where they are stored, when the database can search vectors itself.

With PostgreSQL + pgvector every worker asks the database (its HNSW index, `ef_search` from
the store's configuration) on every identification instead of holding its own copy of every
key: a key enrolled by one worker is found by every other on its next query, a deleted
user is gone from the next query, and a session starts without reading the keys.

What the identifier derives from many keys (s-norm statistics, "are there n enrolled
users") is cached by the identifier and this index against `version()`: the newest key id
in the store (one primary-key probe per poll) plus a time bucket of STATS_TTL_S, so a
cache is dropped on any enrolment and, since deleting keys leaves the newest id as it
is, at least every STATS_TTL_S seconds. The search itself is never cached.

`key_index` chooses between this and the in-process KeyIndex by the store's capabilities.
"""

from __future__ import annotations

import threading
import time
from typing import Any, ClassVar

import numpy as np

from egomem.identity.index import Hit, KeyIndex, KeySearch, Metric, closest_first, prep_vector
from egomem.schemas import Modality
from egomem.store.base import MemoryStore

# The keys fetched per user asked for: several keys of one user come before the next user.
CANDIDATES_PER_USER = 4
MIN_CANDIDATES = 32
# top_values fetches this many keys beyond n, so that excluding one user's keys (at most
# max_keys_per_user, 8 by default) still leaves n values of others.
EXCLUDE_SLACK = 32
STATS_TTL_S = 30.0


def key_index(store: MemoryStore, modality: Modality, model: str, dim: int, metric: Metric) -> KeySearch:
    """The one place that chooses: the database's own search where it has one, else keys in the process."""
    if store.capabilities.native_vector_search:
        return StoreKeyIndex(store, modality, model, dim, metric)
    return KeyIndex(dim, metric)


class StoreKeyIndex:
    """KeySearch over the store's keys of one encoder (`model`); holds no keys itself."""

    holds_keys: ClassVar[bool] = False

    def __init__(self, store: MemoryStore, modality: Modality, model: str, dim: int, metric: Metric) -> None:
        self.store = store
        self.modality = modality
        self.model = model
        self.dim = dim
        self.metric = metric
        self._lock = threading.Lock()
        self._users_known: tuple[tuple[int, int], int] | None = None  # (version, distinct users counted up to n)
        # The last top_values query and its neighbours, reused while version() has not changed since.
        self._last_top: tuple[tuple[bytes, int, object], np.ndarray, list[str]] | None = None
        self._seen: object = None  # what version() last returned

    def __len__(self) -> int:
        return self.store.key_count(self.modality, self.model)

    @property
    def user_ids(self) -> set[str]:
        return set(self.store.key_user_ids(self.modality, self.model))

    def prep(self, v: Any) -> np.ndarray:
        return prep_vector(v, self.dim, self.metric)

    def version(self) -> tuple[int, int]:
        seen = (self.store.newest_key_id(), int(time.monotonic() // STATS_TTL_S))
        with self._lock:
            self._seen = seen
        return seen

    # -- queries --------------------------------------------------------------------------
    def _nearest(self, q: np.ndarray, k: int) -> tuple[np.ndarray, list[str], list[int]]:
        """(values, user ids, key ids) of the k nearest keys, closest first (values as KeyIndex gives them)."""
        matches = self.store.nearest_keys(self.modality, q, k, model=self.model)
        dist = np.array([m.distance for m in matches], dtype=np.float64)
        values = 1.0 - dist if self.metric == "cosine" else dist
        return values, [m.user_id for m in matches], [m.key_id for m in matches]

    def search(self, query: Any, k_users: int = 5) -> list[Hit]:
        q = self.prep(query)
        values, users, key_ids = self._nearest(q, max(CANDIDATES_PER_USER * k_users, MIN_CANDIDATES))
        hits: dict[str, Hit] = {}
        for v, u, k in zip(values.tolist(), users, key_ids, strict=True):
            if u not in hits:
                hits[u] = Hit(u, k, float(v))
            if len(hits) >= k_users:
                break
        return list(hits.values())

    def top_values(self, query: Any, n: int, exclude_user: str | None = None) -> np.ndarray:
        """Through the HNSW index (approximate): the s-norm cohort wants only the n closest."""
        q = self.prep(query)
        k = n + EXCLUDE_SLACK
        with self._lock:
            stamp, last = (q.tobytes(), k, self._seen), self._last_top
        if last is not None and last[0] == stamp:
            values, users = last[1], last[2]
        else:  # the identifier asks once per candidate user with the same query: one database query
            values, users, _ = self._nearest(q, k)
            with self._lock:
                self._last_top = (stamp, values, users)
        if exclude_user is not None:
            values = values[np.asarray(users, dtype=object) != exclude_user]
        return values[np.argsort(closest_first(values, self.metric), kind="stable")][:n]

    def keys_of(self, user_id: str) -> list[tuple[int, np.ndarray]]:
        return [
            (int(k.id or 0), self.prep(k.vector))
            for k in self.store.list_keys(self.modality, user_id)
            if k.model == self.model
        ]

    def has_users(self, n: int) -> bool:
        version = self.version()
        with self._lock:
            known = self._users_known
        # New keys can only add users: a count already >= n is re-checked (for deletions) when the time
        # bucket turns, not on every enrolment; DISTINCT over a million keys is no per-poll query.
        stale = known is None or known[0] != version
        if stale and known is not None and known[1] >= n and known[0][1] == version[1]:
            stale = False
        if stale:
            known = (version, len(self.store.key_user_ids(self.modality, self.model, limit=n)))
            with self._lock:
                self._users_known = known
        assert known is not None
        return known[1] >= n

    # -- changes: the store holds the keys; the identifier writes them there ----------------------
    def add(self, user_id: str, key_id: int, vector: Any) -> None:
        self.prep(vector)  # the same refusal as the in-process index

    def add_many(self, items: list[tuple[str, int, Any]]) -> None:
        for _, _, v in items:
            self.prep(v)

    def remove_keys(self, key_ids: set[int]) -> int:
        return 0

    def remove_user(self, user_id: str) -> int:
        return 0

    def clear(self) -> None:
        with self._lock:
            self._users_known = None
            self._last_top = None
