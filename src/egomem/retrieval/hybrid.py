"""Free-text search over the store for the runtime and the admin API: `search_user_memories` and
`search_episodes` are shortcuts into the one recipe-driven search (retrieval/search.py; BM25 +
dense, fused by reciprocal rank).
"""

from __future__ import annotations

from egomem.retrieval.dense import EmbeddingCache
from egomem.retrieval.search import TurnCorpus, search
from egomem.retrieval.search_config import DEFAULT_TURNS, FACTS_HYBRID, SearchFilters, TurnSearch
from egomem.schemas import Episode, Fact
from egomem.store.base import MemoryStore


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
