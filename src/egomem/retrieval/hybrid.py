"""Hybrid search (BM25 + dense, fused by reciprocal rank) for callers that send free text.

`HybridIndex` works over any list of texts. `search_user_memories` and `search_episodes`
are the runtime's shortcuts into the one recipe-driven search (retrieval/search.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from egomem.errors import InputError
from egomem.retrieval.dense import EmbeddingCache, rrf
from egomem.retrieval.lexical import BM25Index
from egomem.retrieval.search import TurnCorpus, search
from egomem.retrieval.search_config import DEFAULT_TURNS, FACTS_HYBRID, SearchFilters, TurnSearch
from egomem.schemas import Episode, Fact
from egomem.store.base import MemoryStore


@dataclass(frozen=True)
class Hit:
    index: int
    score: float


class HybridIndex:
    """Ranks documents for a query by `mode`: "bm25", "dense" or "hybrid" (RRF of both)."""

    def __init__(self, docs: Sequence[str], cache: EmbeddingCache, *, rrf_k: float = 60.0) -> None:
        self.docs = list(docs)
        self.cache = cache
        self.rrf_k = rrf_k
        self.bm25 = BM25Index(self.docs)
        self.vectors = cache.embed(self.docs)

    def dense_scores(self, query: str) -> np.ndarray:
        q = self.cache.encoder.encode([query])[0]
        return self.vectors @ q

    def search(self, query: str, k: int = 10, *, mode: str = "hybrid") -> list[Hit]:
        if mode not in ("bm25", "dense", "hybrid"):
            raise InputError(f"unknown search mode {mode!r}; use bm25, dense or hybrid")
        if k <= 0 or not self.docs or not query.strip():
            return []
        n = len(self.docs)
        if mode == "bm25":
            scores = self.bm25.scores(query).astype(np.float64)
        elif mode == "dense":
            scores = self.dense_scores(query).astype(np.float64)
        else:
            lex = self.bm25.scores(query)
            lex_order = np.argsort(-lex, kind="stable")[: int((lex > 0).sum())]
            dense_order = np.argsort(-self.dense_scores(query), kind="stable")
            scores = rrf([lex_order, dense_order], n, k=self.rrf_k)
        top = np.argsort(-scores, kind="stable")[:k]
        return [Hit(int(i), float(scores[i])) for i in top]


def search_user_memories(
    store: MemoryStore, user_id: str, query: str, cache: EmbeddingCache, k: int = 5
) -> list[tuple[Fact, float]]:
    """The user's own current facts that best match free text (empty for no facts)."""
    config = FACTS_HYBRID.model_copy(update={"limit": k})
    hits = search(store, query, cache, config, SearchFilters(user_id=user_id)).facts
    return [(h.fact, h.score) for h in hits]


def search_episodes(
    store: MemoryStore, query: str, cache: EmbeddingCache, k: int = 5, *, user_id: str | None = None
) -> list[tuple[Episode, float]]:
    """Stored episodes whose turns or summary best match free text (the product's turn
    recipe; an episode scores as its best unit)."""
    if k <= 0:
        return []
    corpus = TurnCorpus(store, cache, DEFAULT_TURNS.turns or TurnSearch(), SearchFilters(user_id=user_id))
    best: dict[str, tuple[Episode, float]] = {}
    for hit in corpus.search(query, len(corpus.units)):
        if hit.episode.id not in best:
            best[hit.episode.id] = (hit.episode, hit.score)
            if len(best) == k:
                break
    return list(best.values())
