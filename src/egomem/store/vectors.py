"""Nearest identity keys in the store: pgvector's HNSW index on PostgreSQL, exact numpy elsewhere.

Face keys (dlib) are compared by L2 distance, voice keys (resemblyzer, L2-normalised)
by cosine distance (1 - cosine similarity), as the identity layer does. Every match
carries a distance: lower is closer, whatever the metric.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

import numpy as np

from egomem.errors import DimensionError, InputError
from egomem.schemas import Modality
from egomem.store.base import MemoryStore
from egomem.store.sql import SQLStore, vector_to_blob

Metric = Literal["l2", "cosine"]

# The encoder each modality uses unless told otherwise, and how its vectors are compared.
DEFAULT_MODEL: dict[Modality, str] = {Modality.FACE: "dlib_resnet_v1", Modality.VOICE: "resemblyzer"}
MODALITY_METRIC: dict[Modality, Metric] = {Modality.FACE: "l2", Modality.VOICE: "cosine"}


@dataclass(frozen=True)
class KeyMatch:
    key_id: int
    user_id: str
    distance: float  # L2 (face) or cosine distance (voice); lower is closer


@runtime_checkable
class NativeNearestKeys(Protocol):
    """A store whose database searches vectors itself (PostgresStore)."""

    def nearest_keys(
        self, modality: Modality, vector: np.ndarray | Sequence[float], k: int = 5, *, model: str | None = None
    ) -> list[KeyMatch]: ...


def check_query(modality: Modality, vector: np.ndarray | Sequence[float], k: int) -> tuple[Modality, np.ndarray]:
    """Validate a nearest-keys query; the same checks on every backend."""
    try:
        modality = Modality(modality)
    except ValueError as exc:
        raise InputError(f"unknown modality {modality!r}: expected face or voice") from exc
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"k must be a positive integer, got {k!r}")
    blob, _ = vector_to_blob(vector)  # refuses empty, non-1-d and non-finite vectors
    query = np.frombuffer(blob, dtype="<f4")
    if MODALITY_METRIC[modality] == "cosine" and not np.any(query):
        raise InputError("a zero vector cannot be compared by cosine distance")
    return modality, query


def exact_nearest(
    key_ids: Sequence[int], user_ids: Sequence[str], matrix: np.ndarray, query: np.ndarray, k: int, metric: Metric
) -> list[KeyMatch]:
    """Brute force over an (n, dim) matrix of keys: one matrix product."""
    if matrix.shape[0] == 0:
        return []
    if matrix.shape[1] != query.size:
        raise DimensionError(f"stored keys have {matrix.shape[1]} dimensions, the query has {query.size}")
    if metric == "l2":
        dist = np.linalg.norm(matrix - query, axis=1)
    else:
        norms = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(query))
        dist = 1.0 - (matrix @ query) / np.where(norms == 0, 1.0, norms)
    k = min(k, dist.size)
    top = np.argpartition(dist, k - 1)[:k]
    top = top[np.argsort(dist[top], kind="stable")]
    return [KeyMatch(int(key_ids[i]), str(user_ids[i]), float(dist[i])) for i in top]


def nearest_keys(
    store: MemoryStore,
    modality: Modality,
    vector: np.ndarray | Sequence[float],
    k: int = 5,
    *,
    model: str | None = None,
) -> list[KeyMatch]:
    """The k keys of `modality` (and `model`, default the modality's encoder) nearest to `vector`.

    An empty store gives []. A query whose dimension differs from the stored keys raises
    DimensionError; a bad k or a zero vector under cosine raises InputError.
    """
    if isinstance(store, NativeNearestKeys):
        return store.nearest_keys(modality, vector, k, model=model)
    modality, query = check_query(modality, vector, k)
    model = model or DEFAULT_MODEL[modality]
    if isinstance(store, SQLStore):
        # Read the raw float32 blobs: decoding 100k keys through IdentityKey models costs seconds.
        rows = store._execute(
            "SELECT id, user_id, vector FROM identity_keys WHERE modality = ? AND model = ? ORDER BY id",
            (modality.value, model),
        )
        ids, users = [r[0] for r in rows], [r[1] for r in rows]
        dim = len(rows[0][2]) // 4 if rows else query.size
        matrix = np.frombuffer(b"".join(bytes(r[2]) for r in rows), dtype="<f4").reshape(len(rows), dim)
    else:
        keys = [key for key in store.list_keys(modality) if key.model == model]
        ids, users = [key.id or 0 for key in keys], [key.user_id for key in keys]
        matrix = np.asarray([key.vector for key in keys], dtype=np.float32).reshape(len(keys), -1)
    return exact_nearest(ids, users, matrix, query, k, MODALITY_METRIC[modality])
