"""Answer F1 of `bench locomo-qa` (a metric of the benchmark, not a product method): `ask`
with the configured answer LLM on a spread sample of test questions, scored by SQuAD's
token F1 against LoCoMo's gold answers."""

from __future__ import annotations

import re
import string
import time
from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any

import numpy as np

from egomem.config import AskConfig
from egomem.llm.base import LLMProvider
from egomem.retrieval.ask import Asker
from egomem.retrieval.dense import EmbeddingCache
from egomem_eval.locomo import CATEGORIES
from egomem_training.eval.stats import bootstrap_mean, listed

if TYPE_CHECKING:
    from egomem.bench.locomo_qa import _Conv

TEST = range(5, 10)  # LoCoMo conversations 6-10: the test split of `bench locomo-qa`
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def _tokens(text: str) -> list[str]:
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    return _ARTICLES.sub(" ", text).split()


def token_f1(prediction: str, gold: str) -> float:
    """SQuAD token F1: lower case, punctuation and articles removed, bag-of-words overlap."""
    p, g = _tokens(prediction), _tokens(gold)
    if not p or not g:
        return float(p == g)
    common = sum((Counter(p) & Counter(g)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(p), common / len(g)
    return 2 * precision * recall / (precision + recall)


def _answer_sample(items: list[_Conv], n: int) -> list[tuple[int, int]]:
    """`n` (conversation, question) pairs of the test conversations (all of them in a quick
    run without any), round-robin over the four categories and the conversations
    (deterministic, from the data alone)."""
    convs = TEST if len(items) > TEST.start else range(len(items))
    pools: dict[int, list[tuple[int, int, int]]] = defaultdict(list)  # category -> (rank, conversation, question)
    for ci, it in enumerate(items):
        if ci in convs and len(it.conv.answers) == len(it.conv.questions):
            rank: Counter[int] = Counter()  # a question's place among its conversation's of its category
            for qi, (_, cat, _) in enumerate(it.conv.questions):
                if cat in CATEGORIES:  # a pool the round-robin never draws from would never empty
                    pools[cat].append((rank[cat], ci, qi))
                    rank[cat] += 1
    for pool in pools.values():  # interleave conversations inside a category: every first, every second, ...
        pool.sort()
    out: list[tuple[int, int]] = []
    while len(out) < n and any(pools.values()):
        for cat in CATEGORIES:
            if pools.get(cat) and len(out) < n:
                _, ci, qi = pools[cat].pop(0)
                out.append((ci, qi))
    return out


def answer_f1(items: list[_Conv], cache: EmbeddingCache, llm: LLMProvider, label: str, n: int) -> dict[str, Any]:
    config = AskConfig(llm=True)
    rows: list[dict[str, Any]] = []
    for ci, qi in _answer_sample(items, n):
        it = items[ci]
        question, cat, _ = it.conv.questions[qi]
        gold = it.conv.answers[qi]
        t0 = time.perf_counter()
        res = Asker(it.store, cache, config, llm=llm, corpus=it.corpus).ask(question)
        best = res.evidence[0].quote if res.evidence else ""
        rows.append(
            {
                "conversation": ci + 1,
                "category": cat,
                "question": question,
                "gold": gold,
                "answer": res.answer,
                "answered_by": res.answered_by,
                "f1": token_f1(res.answer, gold),
                "evidence_f1": token_f1(best, gold),
                "seconds": time.perf_counter() - t0,
            }
        )

    def mean(key: str, cat: int | None = None) -> float | None:
        vals = [r[key] for r in rows if cat is None or r["category"] == cat]
        return float(np.mean(vals)) if vals else None

    # 95 % intervals resampling questions: a conversation's questions are not independent, but
    # five test conversations are too few clusters for a cluster bootstrap to mean anything.
    return {
        "model": label,
        "questions": len(rows),
        "f1": mean("f1"),
        "f1_ci95": listed(bootstrap_mean([r["f1"] for r in rows])),
        "evidence_f1_ci95": listed(bootstrap_mean([r["evidence_f1"] for r in rows])),
        "f1_by_category": {str(c): mean("f1", c) for c in CATEGORIES},
        "evidence_f1": mean("evidence_f1"),
        "answered_by_llm": sum(r["answered_by"].startswith("llm:") for r in rows),
        "seconds_per_question": mean("seconds"),
        "rows": rows,
    }
