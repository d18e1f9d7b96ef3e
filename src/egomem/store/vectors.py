"""Nearest identity keys: in the database where it searches vectors itself (pgvector, HNSW),
exact numpy over the stored float32 keys elsewhere; which one is `store.capabilities`' call.

Each encoder's metric comes from the encoder table (egomem/encoders.py): dlib face keys
by L2 distance, resemblyzer voice keys (L2-normalised) by cosine distance (1 - cosine
similarity), as the identity layer does; a model not in the table is compared like its
modality's default encoder. Every match carries a distance: lower is closer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from egomem.encoders import EncoderSpec, Metric, default_encoder, encoder, known
from egomem.errors import DimensionError, InputError
from egomem.schemas import Modality
from egomem.store.ops.keys import vector_to_blob

if TYPE_CHECKING:
    from egomem.store.base import MemoryStore


@dataclass(frozen=True)
class KeyMatch:
    key_id: int
    user_id: str
    distance: float  # L2 (face) or cosine distance (voice); lower is closer


def compared_as(modality: Modality, model: str) -> EncoderSpec:
    """The encoder entry whose metric compares this model's keys."""
    return encoder(model) if known(model) else default_encoder(modality)


def check_query(
    modality: Modality, vector: np.ndarray | Sequence[float], k: int, model: str | None = None
) -> tuple[Modality, str, np.ndarray]:
    """Validate a nearest-keys query (the same checks on every backend): modality, model, float32 query."""
    try:
        modality = Modality(modality)
    except ValueError as exc:
        raise InputError(f"unknown modality {modality!r}: expected face or voice") from exc
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"k must be a positive integer, got {k!r}")
    blob, _ = vector_to_blob(vector)  # refuses empty, non-1-d and non-finite vectors
    query = np.frombuffer(blob, dtype="<f4")
    model = model or default_encoder(modality).name
    if compared_as(modality, model).metric == "cosine" and not np.any(query):
        raise InputError("a zero vector cannot be compared by cosine distance")
    return modality, model, query


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
    modality, model, query = check_query(modality, vector, k, model)
    metric = compared_as(modality, model)
    if not store.capabilities.native_vector_search:
        ids, users, matrix = store.keys.matrix(modality, model)
        return exact_nearest(ids, users, matrix, query, k, metric.metric)
    from egomem.store.hnsw import nearest_sql, nearest_statement  # pgvector: the `postgres` extra

    if metric.index == "hnsw" and metric.name == model and query.size == metric.dim:
        # A known encoder's keys all have its dimension (add refuses others): no query to check it. One
        # round trip, binary query vector, SQL compiled once (identification runs this on every poll).
        from pgvector import Vector

        found = store.db.fetch_sql(nearest_sql(metric, k), {"query": Vector(query)})
        return [KeyMatch(int(key_id), str(user_id), float(dist)) for key_id, user_id, dist in found]
    stored = store.keys.stored_dim(modality, model)  # other models, and a query of the wrong size
    if stored is None:
        return []
    if stored != query.size:
        raise DimensionError(f"stored keys have {stored} dimensions, the query has {query.size}")
    rows = store.db.fetch(nearest_statement(modality, model, metric.pg_operator, query, k))
    return [KeyMatch(int(r["id"]), str(r["user_id"]), float(r["distance"])) for r in rows]
