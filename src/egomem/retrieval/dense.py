"""Dense similarity with the shared text encoder, and a text -> vector cache.

Candidate documents are re-embedded only when their text is new, so a retrieval over a
stable social graph costs one query embedding plus a matrix-vector product.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from egomem.retrieval.encoder import DIM, TextEncoder


class EmbeddingCache:
    """LRU map from text to its L2-normalised embedding."""

    def __init__(self, encoder: TextEncoder, max_items: int = 200_000) -> None:
        self.encoder = encoder
        self.max_items = max_items
        self._vecs: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """(n, 384) embeddings of `texts`, computing only the ones not cached."""
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._vecs))
        if missing:
            vecs = self.encoder.encode(missing)
            with self._lock:
                for t, v in zip(missing, vecs, strict=True):
                    self._vecs[t] = v
                while len(self._vecs) > self.max_items:
                    self._vecs.popitem(last=False)
        with self._lock:
            out = np.empty((len(texts), DIM), dtype=np.float32)
            for i, t in enumerate(texts):
                v = self._vecs.get(t)
                if v is None:  # evicted between the two locks by a concurrent caller
                    v = self.encoder.encode([t])[0]
                out[i] = v
                self._vecs.move_to_end(t)
        return out


def rrf(
    rankings: Sequence[np.ndarray], n: int, *, k: float = 60.0, weights: Sequence[float] | None = None
) -> np.ndarray:
    """Reciprocal-rank fusion: each ranking is document indices, best first; returns
    one fused score per document (0 for documents no ranking lists)."""
    fused = np.zeros(n, dtype=np.float64)
    ws = weights or [1.0] * len(rankings)
    for w, order in zip(ws, rankings, strict=True):
        ranks = np.arange(len(order), dtype=np.float64)
        fused[np.asarray(order, dtype=np.int64)] += w / (k + 1.0 + ranks)
    return fused
