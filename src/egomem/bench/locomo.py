"""`egomem bench locomo`: evidence retrieval on LoCoMo, through the product's store and search.

Each conversation is ingested into a fresh product store: its two speakers become users
and each session an episode holding its turns (speaker-tagged transcript, the session's
date as the episode's start). Each question of categories 1-4 is sent to the product's
search (`retrieval.search`) with a recipe (`retrieval.search_config`); recall@k is the
share of the question's evidence turns (`dia_id`) among the top k turns, averaged over
questions.

Recipes are chosen on conversations 1-5 (dev) only: a small grid over the neighbouring
turn window and speaker awareness, best dev recall@10 wins. Conversations 6-10 are the
test figure. `product` is the recipe the product ships (`DEFAULT_TURNS`); the ablation
rows add one idea at a time (bm25, dense, hybrid RRF, +context windows, +speaker).
Photo captions (an earlier bench-only idea) are gone: the product stores no captions.
Evidence ids that are malformed or name no turn are skipped and counted.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from egomem.bench import BenchOptions, BenchResult, data_root, register
from egomem.retrieval.conversations import store_conversation
from egomem.retrieval.dense import EmbeddingCache
from egomem.retrieval.encoder import TextEncoder
from egomem.retrieval.search import TurnCorpus, search
from egomem.retrieval.search_config import (
    DEFAULT_TURNS,
    TURNS_BM25,
    TURNS_CONTEXT,
    TURNS_CONTEXT_SPEAKER,
    TURNS_DENSE,
    TURNS_HYBRID,
    SearchConfig,
    SearchFilters,
    TurnSearch,
)
from egomem.store.base import MemoryStore
from egomem.store.sqlite import SQLiteStore
from egomem_eval.locomo import CATEGORIES, CATEGORY_NAMES, Conversation, episode_sessions, load_locomo, truncate

KS = (5, 10, 20)
DEV = range(0, 5)  # conversations 1-5 choose recipes; 6-10 are the test set

ABLATIONS: dict[str, SearchConfig] = {
    "bm25": TURNS_BM25,
    "dense": TURNS_DENSE,
    "hybrid": TURNS_HYBRID,
    "context": TURNS_CONTEXT,
    "speaker": TURNS_CONTEXT_SPEAKER,
}
# The dev grid: every window 0-2 with and without speaker awareness (hybrid RRF k = 60).
GRID: dict[str, SearchConfig] = {
    f"w{w}{'+speaker' if sp else ''}": SearchConfig(facts=None, turns=TurnSearch(window=w, speaker_aware=sp))
    for w in (0, 1, 2)
    for sp in (False, True)
}


def ingest(conv: Conversation, store: MemoryStore) -> dict[tuple[str, int], str]:
    """Store the conversation through the product (`retrieval.conversations`: speakers as
    users, sessions as episodes with their turns); returns (episode id, turn index) -> dia_id."""
    groups, sessions = episode_sessions(conv)
    stored = store_conversation(store, sessions, cause="locomo ingest")
    return {(s.episode.id, i): ts[j].dia_id for s, ts in zip(stored, groups, strict=True) for i, j in enumerate(s.kept)}


@dataclass
class _Scores:
    """Recall@k per question, with the question's category and conversation."""

    rows: list[tuple[int, int, list[float]]] = field(default_factory=list)  # (conversation, category, R@KS)
    rank_ms: list[float] = field(default_factory=list)

    def mean(self, k: int, convs: range | None = None, cat: int | None = None) -> float | None:
        j = KS.index(k)
        vals = [r[j] for c, q, r in self.rows if (convs is None or c in convs) and (cat is None or q == cat)]
        return float(np.mean(vals)) if vals else None

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {f"recall_at_{k}": self.mean(k) for k in KS}
        out["recall_at_10_by_category"] = {str(c): self.mean(10, cat=c) for c in CATEGORIES if self.mean(10, cat=c)}
        out["dev_recall_at_10"] = self.mean(10, DEV)
        out["test_recall_at_10"] = self.mean(10, range(5, 10))
        out["rank_ms_per_query"] = float(np.mean(self.rank_ms)) if self.rank_ms else 0.0
        return out


class _Stores:
    """Each conversation ingested once into its own product store."""

    def __init__(self, convs: list[Conversation], root: Path) -> None:
        self.items: list[tuple[Conversation, MemoryStore, dict[tuple[str, int], str]]] = []
        for i, conv in enumerate(convs):
            store = SQLiteStore(root / f"conv{i}.db")
            self.items.append((conv, store, ingest(conv, store)))

    def close(self) -> None:
        for _, store, _ in self.items:
            store.close()


def evaluate(stores: _Stores, cache: EmbeddingCache, recipe: SearchConfig, convs: range | None = None) -> _Scores:
    recipe = recipe.model_copy(update={"limit": max(KS)})
    scores = _Scores()
    for ci, (conv, store, where) in enumerate(stores.items):
        if convs is not None and ci not in convs:
            continue
        corpus = TurnCorpus(store, cache, recipe.turns or TurnSearch(), SearchFilters())
        for question, cat, evidence in conv.questions:
            t0 = time.perf_counter()
            hits = search(store, question, cache, recipe, corpus=corpus).turns
            scores.rank_ms.append((time.perf_counter() - t0) * 1000)
            found = [where.get((h.episode.id, h.turn_index), "") if h.turn_index is not None else "" for h in hits]
            scores.rows.append((ci, cat, [float(np.mean([e in found[:k] for e in evidence])) for k in KS]))
    return scores


@register("locomo")
def run(options: BenchOptions) -> BenchResult:
    data = data_root(options, "locomo")
    convs, counts = load_locomo(Path(data))
    if options.quick:  # the first conversation's first sessions: a smoke run in seconds
        convs = [truncate(convs[0], int(options.extra.get("max_turns", 120)))] if convs else []
    threads = options.extra.get("threads", "1")
    cache = EmbeddingCache(TextEncoder(threads=int(threads) if threads else None))
    n_q = sum(len(c.questions) for c in convs)
    cache.encoder.encode(["warm-up"])  # loads the model outside the timing
    t0 = time.perf_counter()
    cache.embed([q for c in convs for q, _, _ in c.questions])  # one batch; search then finds them cached
    query_embed_ms = 1000 * (time.perf_counter() - t0) / max(n_q, 1)
    with tempfile.TemporaryDirectory(prefix="egomem-locomo-") as tmp:
        stores = _Stores(convs, Path(tmp))
        try:
            grid = {name: evaluate(stores, cache, r, DEV).mean(10, DEV) for name, r in GRID.items()}
            chosen = max(grid, key=lambda n: grid[n] or 0.0)
            product = evaluate(stores, cache, DEFAULT_TURNS).summary()
            ablations = {name: evaluate(stores, cache, r).summary() for name, r in ABLATIONS.items()}
        finally:
            stores.close()
    product["recipe"] = DEFAULT_TURNS.model_dump(mode="json")
    metrics: dict[str, Any] = {
        "questions": n_q,
        "conversations": len(convs),
        **counts,
        "product": product,
        "ablations": ablations,
        "selection": {
            "dev_recall_at_10": grid,
            "chosen": chosen,
            "chosen_recipe": GRID[chosen].model_dump(mode="json"),
        },
        "query_embed_ms": query_embed_ms,
        "seconds": time.perf_counter() - t0,
    }
    return BenchResult("locomo", metrics, _tables(metrics), _notes(metrics, threads))


def _tables(m: dict[str, Any]) -> list[tuple[str, list[str], list[list[Any]]]]:
    def row(name: str, s: dict[str, Any]) -> list[Any]:
        cats = [s["recall_at_10_by_category"].get(str(c), float("nan")) for c in CATEGORIES]
        dev, test = (float("nan") if s[k] is None else s[k] for k in ("dev_recall_at_10", "test_recall_at_10"))
        return [name, s["recall_at_5"], s["recall_at_10"], s["recall_at_20"], dev, test, *cats]

    header = ["recipe", "R@5", "R@10", "R@20", "R@10 dev 1-5", "R@10 test 6-10"]
    header += [f"R@10 c{c} {CATEGORY_NAMES[c]}" for c in CATEGORIES]
    rows = [row(name, s) for name, s in m["ablations"].items()] + [row("product (DEFAULT_TURNS)", m["product"])]
    title = f"LoCoMo evidence recall, categories 1-4 ({m['questions']} questions, {m['conversations']} conversations)"
    sel = m["selection"]
    grid_rows: list[list[Any]] = [
        [n, v, "<- chosen" if n == sel["chosen"] else ""] for n, v in sel["dev_recall_at_10"].items()
    ]
    return [(title, header, rows), ("recipe choice on dev conversations 1-5", ["grid", "R@10 dev", ""], grid_rows)]


def _notes(m: dict[str, Any], threads: str) -> list[str]:
    return [
        f"skipped {m['malformed_evidence_ids']} malformed/unknown evidence ids; "
        f"{m['questions_without_evidence']} questions left without evidence",
        f"query embedding {m['query_embed_ms']:.1f} ms/query (batched); search ms/query per recipe in the JSON",
        f"torch threads: {threads or 'default'}",
    ]
