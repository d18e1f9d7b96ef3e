"""`egomem bench locomo-qa`: LoCoMo questions answered by `ask`, multi-round vs single-shot.

Each conversation is ingested into a fresh product store through the product's memory
(`egomem_eval.conversation_memory.memorize_conversation`): every session is stored as an
episode holding its turns (speakers as users), and each speaker's turns of each session
go through the memory extractor and the update agent (`--set extractor=rules`, the
default, or `local`, the on-device LLM; `--set sessions=N` extracts from the first N
sessions of each conversation only, for a slow extractor), so facts, relations and their
evidence weights are in memory too. Each question of categories 1-4 is asked with
`retrieval.ask.Asker` in an LLM-free configuration, twice in the same run:

- `multi_round`: the product's `[ask]` configuration (`AskConfig()`, rounds as configured);
- `single_shot`: the same with `max_rounds = 1` (round 1 only: one search with the question).

Evidence recall@10 is the share of a question's evidence turns (`dia_id`) among the first
10 evidence items `ask` returns, averaged over questions (an empty answer scores 0); a
fact counts as the turn it was extracted from (its episode and quoted words). `plain_search`
is the product's turn search with the ask recipe and no resolution at all, for reference.
The `[ask]` weights were chosen on conversations 1-5 (dev: the `selection` grid below is
re-run with `--set grid=1`); conversations 6-10 are the test figure.

Answer F1 (`--set answer_llm=local`): `ask` with the configured answer LLM on
`answer_questions` (default 100) test questions spread over conversations 6-10 and the four
categories, scored by SQuAD-style token F1 against LoCoMo's gold answers (with a 95 % bootstrap
interval over questions), labelled with the model; `evidence_f1` scores the best evidence item's
words on the same questions, for reference. `--set recall=0` skips the recall part (an answer-only run).
"""

from __future__ import annotations

import os
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from egomem.bench import BenchOptions, BenchResult, data_root, register
from egomem.bench._locomo_answers import TEST, answer_f1
from egomem.config import AskConfig, Config, load_config
from egomem.errors import InputError
from egomem.llm.base import LLMProvider
from egomem.providers import BuildContext, create
from egomem.retrieval.ask import Asker
from egomem.retrieval.ask_types import FactFusion
from egomem.retrieval.dense import EmbeddingCache
from egomem.retrieval.encoder import TextEncoder
from egomem.retrieval.search import TurnCorpus, search
from egomem.retrieval.search_config import RECIPES, SearchFilters, TurnSearch
from egomem.runtime.build import memory_manager
from egomem.store.base import MemoryStore
from egomem.store.sqlite import SQLiteStore
from egomem_eval.conversation_memory import memorize_conversation
from egomem_eval.locomo import CATEGORIES, CATEGORY_NAMES, Conversation, episode_sessions, load_locomo, truncate

K = 10
DEV = range(0, 5)  # conversations 1-5 choose; TEST (6-10, _locomo_answers) reports
EXTRACTORS = ("rules", "local")
# The dev grid: one idea at a time and together (weights of the later rounds' rankings).
GRID: dict[str, dict[str, Any]] = {
    "people links only": {"other_episodes_weight": 0.0, "time_weight": 0.0, "feedback_weight": 0.0},
    "+ other episodes 0.5": {"other_episodes_weight": 0.5, "time_weight": 0.0, "feedback_weight": 0.0},
    "+ says-when 0.5": {"other_episodes_weight": 0.0, "time_weight": 0.5, "feedback_weight": 0.0},
    "+ feedback 0.3": {"other_episodes_weight": 0.0, "time_weight": 0.0, "feedback_weight": 0.3},
    "+ says-when 0.5, feedback 0.3": {"other_episodes_weight": 0.0, "time_weight": 0.5, "feedback_weight": 0.3},
    "+ says-when 0.5, feedback 0.5": {"other_episodes_weight": 0.0, "time_weight": 0.5, "feedback_weight": 0.5},
}

# Extracted memory beside the raw turns (retrieval.ask_types.FactFusion; issue 27 item 6), with the
# round weights above: chosen on dev by mean R@10 over all categories (what `ask` should not lose).
FUSION_GRID: dict[str, dict[str, Any]] = {
    "facts ranked as turns (1.0)": {"facts_weight": 1.0, "fold_facts": False},
    "facts folded into their source turns": {"facts_weight": 1.0, "fold_facts": True},
    "facts 0.75": {"facts_weight": 0.75, "fold_facts": False},
    "facts 0.75, folded": {"facts_weight": 0.75, "fold_facts": True},
    "facts below every turn of the pool (0.5)": {"facts_weight": 0.5, "fold_facts": False},
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
    where: dict[tuple[str, int], str]  # (episode id, turn index) -> dia_id
    fact_turn: dict[str, str]  # fact id -> the dia_id of the turn it was extracted from
    corpus: TurnCorpus


class _CachedEncoder:
    """The update agent's encoder through the run's embedding cache (known facts are
    compared again every session)."""

    def __init__(self, cache: EmbeddingCache) -> None:
        self.cache = cache

    def encode(self, texts: list[str]) -> np.ndarray:
        return self.cache.embed(texts)


def _ingest(
    conv: Conversation, manager: Any, sessions: int | None
) -> tuple[dict[tuple[str, int], str], dict[str, Any]]:
    """The conversation through the product's memory; (episode id, turn index) -> dia_id, and counts."""
    by_session, turns = episode_sessions(conv)
    done = memorize_conversation(manager, turns, cause="locomo-qa ingest", extract_sessions=sessions)
    where = {
        (s.episode.id, i): ts[j].dia_id
        for s, ts in zip(done.sessions, by_session, strict=True)
        for i, j in enumerate(s.kept)
    }
    failed = Counter(o.reason for o in done.failed)
    return where, {"speaker_sessions": len(done.outcomes), "failed": dict(failed)}


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _fact_turns(store: MemoryStore, conv: Conversation, where: dict[tuple[str, int], str]) -> dict[str, str]:
    """Each extracted fact's source turn: the turn of its episode that holds its quoted words."""
    text_of = {t.dia_id: _norm(t.text) for t in conv.turns}
    turns_of: dict[str, list[str]] = defaultdict(list)
    for (ep, _), dia in where.items():
        turns_of[ep].append(dia)
    out: dict[str, str] = {}
    for u in store.list_users():
        for f in store.list_facts(u.id, include_history=True):
            quote = _norm(f.source_text or "")
            if f.source_episode and quote:
                hit = next((d for d in turns_of[f.source_episode] if quote in text_of[d] or text_of[d] in quote), "")
                if hit:
                    out[f.id] = hit
    return out


def _recall(found: list[str], evidence: list[str]) -> float:
    return float(np.mean([e in found[:K] for e in evidence]))


def _found(it: _Conv, evidence: list[Any]) -> list[str]:
    out = []
    for e in evidence:
        if e.kind == "turn" and e.episode_id and e.turn_index is not None:
            out.append(it.where.get((e.episode_id, e.turn_index), ""))
        elif e.kind == "fact" and e.fact_id:
            out.append(it.fact_turn.get(e.fact_id, ""))
        else:
            out.append("")
    return out


def evaluate(
    items: list[_Conv],
    cache: EmbeddingCache,
    config: AskConfig,
    convs: range | None = None,
    fusion: FactFusion | None = None,
) -> _Scores:
    scores = _Scores()
    for ci, it in enumerate(items):
        if convs is not None and ci not in convs:
            continue
        asker = Asker(it.store, cache, config, llm=None, corpus=it.corpus, fusion=fusion)
        for question, cat, evidence in it.conv.questions:
            t0 = time.perf_counter()
            res = asker.ask(question)
            scores.ms.append((time.perf_counter() - t0) * 1000)
            scores.rows.append((ci, cat, _recall(_found(it, res.evidence), evidence)))
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


def _config(provider: str) -> Config:
    """The product's configuration with the language model set to `provider`."""
    return load_config(environ={**os.environ, "EGOMEM_LLM__PROVIDER": provider})


def _llm(provider: str) -> tuple[LLMProvider, str]:
    cfg = _config(provider)
    llm = create("llm", cfg.llm, BuildContext(cfg.data_dir))
    model = getattr(llm, "model_path", None)
    return llm, f"{llm.name}:{Path(model).name}" if model else llm.name


def _choice(options: BenchOptions, key: str, allowed: tuple[str, ...], default: str) -> str:
    value = options.extra.get(key, default)
    if value not in allowed:
        raise InputError(f"{key} must be one of {', '.join(allowed)}; got {value!r}")
    return value


@register("locomo-qa")
def run(options: BenchOptions) -> BenchResult:
    extractor = _choice(options, "extractor", EXTRACTORS, "rules")
    answer_llm = _choice(options, "answer_llm", ("none", *EXTRACTORS[1:]), "none")
    convs, counts = load_locomo(Path(data_root(options, "locomo")))
    if options.quick:
        convs = [truncate(convs[0], int(options.extra.get("max_turns", 120)))] if convs else []
    threads = options.extra.get("threads", "1")
    sessions = int(options.extra["sessions"]) if options.extra.get("sessions") else None
    n_answers = int(options.extra.get("answer_questions", 100))
    recall_on = options.extra.get("recall", "1") == "1"
    cache = EmbeddingCache(TextEncoder(threads=int(threads) if threads else None))
    product = AskConfig(llm=False)
    single = product.model_copy(update={"max_rounds": 1})
    grid_on = options.extra.get("grid", "0") == "1" and not options.quick  # the dev grid: --set grid=1
    t0 = time.perf_counter()
    cache.embed([q for c in convs for q, _, _ in c.questions])
    extract_llm, extract_label = _llm(extractor)
    metrics: dict[str, Any] = {
        "questions": sum(len(c.questions) for c in convs),
        "conversations": len(convs),
        **counts,
        "k": K,
        "llm": None,
    }
    with tempfile.TemporaryDirectory(prefix="egomem-locomo-qa-") as tmp:
        items: list[_Conv] = []
        recipe = RECIPES[product.recipe].turns or TurnSearch()
        ingest: dict[str, Any] = {"extractor": extract_label, "sessions_per_conversation": sessions, "failed": {}}
        t_ingest = time.perf_counter()
        for i, conv in enumerate(convs):
            options.report(f"locomo-qa: memorising conversation {i + 1} of {len(convs)}")
            store = SQLiteStore(Path(tmp) / f"conv{i}.db")
            manager = memory_manager(_config(extractor).memory, store, extract_llm, _CachedEncoder(cache))
            where, done = _ingest(conv, manager, sessions)
            fact_turn = _fact_turns(store, conv, where)
            items.append(_Conv(conv, store, where, fact_turn, TurnCorpus(store, cache, recipe, SearchFilters())))
            ingest["speaker_sessions"] = ingest.get("speaker_sessions", 0) + done["speaker_sessions"]
            for reason, n in done["failed"].items():
                ingest["failed"][reason] = ingest["failed"].get(reason, 0) + n
        ingest["seconds"] = time.perf_counter() - t_ingest
        ingest.update(_memory_counts(items))
        metrics["ingest"] = ingest
        try:
            if recall_on:
                options.report("locomo-qa: asking the questions (multi-round, single-shot, plain search)")
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
                metrics["multi_round"] = {**multi.summary(), "config": product.model_dump(mode="json")}
                metrics["single_shot"] = {**shot.summary(), "config": single.model_dump(mode="json")}
                metrics["plain_search"] = {**plain.summary(), "recipe": product.recipe}
                fusion = (
                    {
                        name: evaluate(items, cache, product, DEV, FactFusion(**upd)).mean(DEV)
                        for name, upd in FUSION_GRID.items()
                    }
                    if grid_on
                    else {}
                )
                metrics["selection"] = {
                    "dev_recall_at_10_cat_1_2": grid,
                    "grid": GRID,
                    "fusion_dev_recall_at_10": fusion,
                    "fusion_grid": FUSION_GRID,
                }
            if answer_llm != "none":
                options.report(f"locomo-qa: answers with {answer_llm}")
                llm, label = _llm(answer_llm)
                metrics["llm"] = label
                metrics["answers"] = answer_f1(items, cache, llm, label, n_answers)
        finally:
            for it in items:
                it.store.close()
    metrics["seconds"] = time.perf_counter() - t0
    if recall_on:
        for c in CATEGORIES:
            m, s = (
                metrics["multi_round"]["recall_at_10_by_category"][str(c)],
                metrics["single_shot"]["recall_at_10_by_category"][str(c)],
            )
            metrics.setdefault("multi_minus_single_by_category", {})[str(c)] = None if m is None or s is None else m - s
    return BenchResult("locomo-qa", metrics, _tables(metrics), _notes(metrics, threads))


def _memory_counts(items: list[_Conv]) -> dict[str, Any]:
    """What the extractor and update agent left in memory, over all conversations."""
    facts = confirmed = superseded = relations = mapped = 0
    for it in items:
        for u in it.store.list_users():
            all_facts = it.store.list_facts(u.id, include_history=True)
            facts += sum(f.kind != "summary" for f in all_facts)
            confirmed += sum(f.support > 1 for f in all_facts)
            superseded += sum(f.valid_to is not None for f in all_facts)
            relations += sum(r.subject_id == u.id for r in it.store.list_relations(u.id, include_history=True))
        mapped += len(it.fact_turn)
    return {
        "facts": facts,
        "facts_confirmed": confirmed,
        "facts_closed": superseded,
        "relations": relations,
        "facts_mapped_to_turns": mapped,
    }


def _cell(v: float | None) -> float:
    return float("nan") if v is None else v


def _tables(m: dict[str, Any]) -> list[tuple[str, list[str], list[list[Any]]]]:
    out: list[tuple[str, list[str], list[list[Any]]]] = []
    ing = m["ingest"]
    out.append(
        (
            f"memory from the conversations (extractor {ing['extractor']})",
            ["facts", "confirmed (support > 1)", "closed", "relations", "facts mapped to a turn", "ingest s"],
            [
                [
                    ing["facts"],
                    ing["facts_confirmed"],
                    ing["facts_closed"],
                    ing["relations"],
                    ing["facts_mapped_to_turns"],
                    ing["seconds"],
                ]
            ],
        )
    )
    if "multi_round" in m:
        out += _recall_tables(m)
    if "answers" in m:
        a = m["answers"]
        header = ["model", "questions", "F1", *(f"F1 c{c}" for c in CATEGORIES), "evidence F1", "s/question"]
        row = [a["model"], a["questions"], _cell(a["f1"]), *(_cell(a["f1_by_category"][str(c)]) for c in CATEGORIES)]
        out.append(
            (
                "answer F1 on test questions (conversations 6-10)",
                header,
                [[*row, _cell(a["evidence_f1"]), _cell(a["seconds_per_question"])]],
            )
        )
    return out


def _recall_tables(m: dict[str, Any]) -> list[tuple[str, list[str], list[list[Any]]]]:
    header = ["search", "R@10 all", "R@10 dev 1-5", "R@10 test 6-10"]
    header += [f"R@10 c{c} {CATEGORY_NAMES[c]}" for c in CATEGORIES] + ["rounds", "ms/q"]
    rows = []
    for name in ("multi_round", "single_shot", "plain_search"):
        s = m[name]
        cats = [_cell(s["recall_at_10_by_category"][str(c)]) for c in CATEGORIES]
        rows.append(
            [
                name,
                _cell(s["recall_at_10"]),
                _cell(s["dev"]["recall_at_10"]),
                _cell(s["test"]["recall_at_10"]),
                *cats,
                s["mean_rounds"],
                s["ms_per_question"],
            ]
        )
    test_rows = []
    for name in ("multi_round", "single_shot"):
        by = m[name]["test"]["recall_at_10_by_category"]
        test_rows.append([name, *(_cell(by[str(c)]) for c in CATEGORIES)])
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
    fusion = m["selection"].get("fusion_dev_recall_at_10")
    if fusion:
        out.append(
            (
                "[ask] facts beside turns on dev 1-5 (mean R@10, all categories)",
                ["fusion", "R@10"],
                [[k, v] for k, v in fusion.items()],
            )
        )
    return out


def _notes(m: dict[str, Any], threads: str) -> list[str]:
    notes = []
    if "multi_minus_single_by_category" in m:
        d = m["multi_minus_single_by_category"]
        notes.append(
            "multi-round minus single-shot R@10: "
            + ", ".join(f"c{c} {d[str(c)]:+.4f}" for c in CATEGORIES if d[str(c)] is not None)
        )
    if m["llm"] is None:
        notes.append("no answer LLM: answers are the best evidence itself (answer F1 with --set answer_llm=local)")
    failed = m["ingest"]["failed"]
    if failed:
        notes.append("speaker-sessions not memorised: " + ", ".join(f"{k} {v}" for k, v in failed.items()))
    notes += [
        f"skipped {m['malformed_evidence_ids']} malformed/unknown evidence ids; "
        f"{m['questions_without_evidence']} questions left without evidence",
        f"torch threads: {threads or 'default'}",
    ]
    return notes
