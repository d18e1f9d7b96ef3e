"""`egomem bench locomo-qa`: LoCoMo questions answered by `ask`, multi-round vs single-shot.

Each conversation is ingested into a fresh product store through the product
(`retrieval.conversations.store_conversation`, as `bench locomo` does: speakers as users,
sessions as episodes holding their turns). Each question of categories 1-4 is asked
with `retrieval.ask.Asker` in an LLM-free configuration, twice in the same run:

- `multi_round`: the product's `[ask]` configuration (`AskConfig()`, rounds as configured);
- `single_shot`: the same with `max_rounds = 1` (round 1 only: one search with the question).

Evidence recall@10 is the share of a question's evidence turns (`dia_id`) among the first
10 evidence items `ask` returns, averaged over questions (an empty answer scores 0).
`plain_search` is the product's search with the ask recipe and no resolution at all, for
reference. The `[ask]` weights were chosen on conversations 1-5 (dev: the `selection`
grid below is re-run and recorded each time); conversations 6-10 are the test figure.
Answers are the best evidence itself (no LLM), so there is no answer F1 here.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from egomem.bench import BenchOptions, BenchResult, data_root, register
from egomem.bench.locomo import CATEGORIES, CATEGORY_NAMES, Conversation, _truncate, ingest, load_locomo
from egomem.config import AskConfig
from egomem.retrieval.ask import Asker
from egomem.retrieval.dense import EmbeddingCache
from egomem.retrieval.encoder import TextEncoder
from egomem.retrieval.search import TurnCorpus, search
from egomem.retrieval.search_config import RECIPES, SearchFilters, TurnSearch
from egomem.store.base import MemoryStore
from egomem.store.sqlite import SQLiteStore

K = 10
DEV = range(0, 5)
TEST = range(5, 10)
# The dev grid: one idea at a time and together (weights of the later rounds' rankings).
GRID: dict[str, dict[str, Any]] = {
    "people links only": {"other_episodes_weight": 0.0, "time_weight": 0.0, "feedback_weight": 0.0},
    "+ other episodes 0.5": {"other_episodes_weight": 0.5, "time_weight": 0.0, "feedback_weight": 0.0},
    "+ says-when 0.5": {"other_episodes_weight": 0.0, "time_weight": 0.5, "feedback_weight": 0.0},
    "+ feedback 0.3": {"other_episodes_weight": 0.0, "time_weight": 0.0, "feedback_weight": 0.3},
    "+ says-when 0.5, feedback 0.3": {"other_episodes_weight": 0.0, "time_weight": 0.5, "feedback_weight": 0.3},
    "+ says-when 0.5, feedback 0.5": {"other_episodes_weight": 0.0, "time_weight": 0.5, "feedback_weight": 0.5},
}


@dataclass
class _Scores:
    rows: list[tuple[int, int, float]] = field(default_factory=list)  # (conversation, category, recall@K)
    rounds: list[int] = field(default_factory=list)
    empty: int = 0
    ms: list[float] = field(default_factory=list)

    def mean(self, convs: range | None = None, cat: int | None = None) -> float | None:
        vals = [r for c, q, r in self.rows if (convs is None or c in convs) and (cat is None or q == cat)]
        return float(np.mean(vals)) if vals else None

    def summary(self) -> dict[str, Any]:
        def by_cat(convs: range | None) -> dict[str, float | None]:
            return {str(c): self.mean(convs, c) for c in CATEGORIES}

        return {
            "recall_at_10": self.mean(),
            "recall_at_10_by_category": by_cat(None),
            "dev": {"recall_at_10": self.mean(DEV), "recall_at_10_by_category": by_cat(DEV)},
            "test": {"recall_at_10": self.mean(TEST), "recall_at_10_by_category": by_cat(TEST)},
            "questions": len(self.rows),
            "empty_answers": self.empty,
            "mean_rounds": float(np.mean(self.rounds)) if self.rounds else 0.0,
            "ms_per_question": float(np.mean(self.ms)) if self.ms else 0.0,
        }


@dataclass
class _Conv:
    conv: Conversation
    store: MemoryStore
    where: dict[tuple[str, int], str]
    corpus: TurnCorpus


def _recall(found: list[str], evidence: list[str]) -> float:
    return float(np.mean([e in found[:K] for e in evidence]))


def evaluate(items: list[_Conv], cache: EmbeddingCache, config: AskConfig, convs: range | None = None) -> _Scores:
    scores = _Scores()
    for ci, it in enumerate(items):
        if convs is not None and ci not in convs:
            continue
        asker = Asker(it.store, cache, config, llm=None, corpus=it.corpus)
        for question, cat, evidence in it.conv.questions:
            t0 = time.perf_counter()
            res = asker.ask(question)
            scores.ms.append((time.perf_counter() - t0) * 1000)
            found = [
                it.where.get((e.episode_id, e.turn_index), "")
                if e.kind == "turn" and e.episode_id and e.turn_index is not None
                else ""
                for e in res.evidence
            ]
            scores.rows.append((ci, cat, _recall(found, evidence)))
            scores.rounds.append(res.rounds)
            scores.empty += int(res.empty)
    return scores


def plain_search(items: list[_Conv], cache: EmbeddingCache, config: AskConfig) -> _Scores:
    recipe = RECIPES[config.recipe].model_copy(update={"limit": K})
    scores = _Scores()
    for ci, it in enumerate(items):
        for question, cat, evidence in it.conv.questions:
            hits = search(it.store, question, cache, recipe, corpus=it.corpus).turns
            found = [it.where.get((h.episode.id, h.turn_index), "") if h.turn_index is not None else "" for h in hits]
            scores.rows.append((ci, cat, _recall(found, evidence)))
    return scores


def _dev_12(s: _Scores) -> float:
    """What the grid maximises on dev: mean recall@10 of categories 1 and 2 (the target)."""
    vals = [s.mean(DEV, 1), s.mean(DEV, 2)]
    return float(np.mean([v for v in vals if v is not None])) if any(v is not None for v in vals) else 0.0


@register("locomo-qa")
def run(options: BenchOptions) -> BenchResult:
    convs, counts = load_locomo(Path(data_root(options, "locomo")))
    if options.quick:
        convs = [_truncate(convs[0], int(options.extra.get("max_turns", 120)))] if convs else []
    threads = options.extra.get("threads", "1")
    cache = EmbeddingCache(TextEncoder(threads=int(threads) if threads else None))
    product = AskConfig(llm=False)
    single = product.model_copy(update={"max_rounds": 1})
    grid_on = options.extra.get("grid", "0") == "1" and not options.quick  # the dev grid: --set grid=1
    t0 = time.perf_counter()
    cache.embed([q for c in convs for q, _, _ in c.questions])
    with tempfile.TemporaryDirectory(prefix="egomem-locomo-qa-") as tmp:
        items: list[_Conv] = []
        recipe = RECIPES[product.recipe].turns or TurnSearch()
        for i, conv in enumerate(convs):
            store = SQLiteStore(Path(tmp) / f"conv{i}.db")
            where = ingest(conv, store)
            items.append(_Conv(conv, store, where, TurnCorpus(store, cache, recipe, SearchFilters())))
        try:
            multi = evaluate(items, cache, product)
            shot = evaluate(items, cache, single)
            plain = plain_search(items, cache, product)
            grid = (
                {
                    name: _dev_12(evaluate(items, cache, product.model_copy(update=upd), DEV))
                    for name, upd in GRID.items()
                }
                if grid_on
                else {}
            )
        finally:
            for it in items:
                it.store.close()
    metrics: dict[str, Any] = {
        "questions": sum(len(c.questions) for c in convs),
        "conversations": len(convs),
        **counts,
        "k": K,
        "llm": None,
        "multi_round": {**multi.summary(), "config": product.model_dump(mode="json")},
        "single_shot": {**shot.summary(), "config": single.model_dump(mode="json")},
        "plain_search": {**plain.summary(), "recipe": product.recipe},
        "selection": {"dev_recall_at_10_cat_1_2": grid, "grid": GRID},
        "seconds": time.perf_counter() - t0,
    }
    for c in CATEGORIES:
        m, s = (
            metrics["multi_round"]["recall_at_10_by_category"][str(c)],
            metrics["single_shot"]["recall_at_10_by_category"][str(c)],
        )
        metrics.setdefault("multi_minus_single_by_category", {})[str(c)] = None if m is None or s is None else m - s
    return BenchResult("locomo-qa", metrics, _tables(metrics), _notes(metrics, threads))


def _tables(m: dict[str, Any]) -> list[tuple[str, list[str], list[list[Any]]]]:
    def cell(v: float | None) -> float:
        return float("nan") if v is None else v

    header = ["search", "R@10 all", "R@10 dev 1-5", "R@10 test 6-10"]
    header += [f"R@10 c{c} {CATEGORY_NAMES[c]}" for c in CATEGORIES] + ["rounds", "ms/q"]
    rows = []
    for name in ("multi_round", "single_shot", "plain_search"):
        s = m[name]
        cats = [cell(s["recall_at_10_by_category"][str(c)]) for c in CATEGORIES]
        rows.append(
            [
                name,
                cell(s["recall_at_10"]),
                cell(s["dev"]["recall_at_10"]),
                cell(s["test"]["recall_at_10"]),
                *cats,
                s["mean_rounds"],
                s["ms_per_question"],
            ]
        )
    test_rows = []
    for name in ("multi_round", "single_shot"):
        by = m[name]["test"]["recall_at_10_by_category"]
        test_rows.append([name, *(cell(by[str(c)]) for c in CATEGORIES)])
    title = f"LoCoMo evidence recall@10 through `ask` ({m['questions']} questions, {m['conversations']} conversations)"
    out = [
        (title, header, rows),
        ("test conversations 6-10", ["search", *(f"c{c} {CATEGORY_NAMES[c]}" for c in CATEGORIES)], test_rows),
    ]
    grid = m["selection"]["dev_recall_at_10_cat_1_2"]
    if grid:
        out.append(
            (
                "[ask] weights on dev 1-5 (mean R@10 of categories 1, 2)",
                ["grid", "R@10"],
                [[k, v] for k, v in grid.items()],
            )
        )
    return out


def _notes(m: dict[str, Any], threads: str) -> list[str]:
    d = m["multi_minus_single_by_category"]
    return [
        "multi-round minus single-shot R@10: "
        + ", ".join(f"c{c} {d[str(c)]:+.4f}" for c in CATEGORIES if d[str(c)] is not None),
        "no LLM: answers are the best evidence itself (answer F1 not measured)",
        f"skipped {m['malformed_evidence_ids']} malformed/unknown evidence ids; "
        f"{m['questions_without_evidence']} questions left without evidence",
        f"torch threads: {threads or 'default'}",
    ]
