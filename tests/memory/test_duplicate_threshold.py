"""Where the default duplicate cosine sits, on hand-made pairs (MiniLM, real model).

Repeats merge; different facts of the same shape stay apart, even when close
("a concert on 3 May" vs "on 9 June" is 0.86). Looser paraphrases ("is a nurse" vs
"works as a nurse", 0.80) are left to the slot rules: the threshold is conservative on purpose.
"""

from __future__ import annotations

from typing import Any

from egomem.memory.config import MemoryConfig

REPEATS = [("likes green tea", "likes green tea a lot"), ("went hiking in the Alps", "went hiking in the alps")]
DISTINCT = [
    ("went to a concert on 3 May", "went to a concert on 9 June"),
    ("likes coffee", "dislikes coffee"),
    ("lives in Lyon", "lives in Paris"),
    ("is allergic to peanuts", "is allergic to shellfish"),
]


def test_duplicate_threshold_separates_repeats_from_distinct_facts(encoder: Any) -> None:
    thr = MemoryConfig().duplicate_cosine
    for pairs, repeat in ((REPEATS, True), (DISTINCT, False)):
        for a, b in pairs:
            v = encoder.encode([a, b])
            assert (float(v[0] @ v[1]) >= thr) == repeat, (a, b, float(v[0] @ v[1]))
