"""The 95 % intervals the benchmarks report (egomem_training/eval/stats.py)."""

from __future__ import annotations

import numpy as np

from egomem_training.eval.stats import bootstrap_share, wilson


def test_bootstrap_share_resamples_sessions_not_items() -> None:
    # 20 sessions of 10 items, half all right and half all wrong: the share is 0.5, and since
    # a session's items stand or fall together the interval is as wide as for 20 coin flips
    # (Wilson on n=20: about 0.30-0.70), far wider than 200 independent items would give.
    hits = np.repeat([True, False] * 10, 10)
    sessions = np.repeat(np.arange(20), 10)
    lo, hi = bootstrap_share(hits, sessions) or (0.0, 0.0)
    item_lo, item_hi = wilson(100, 200) or (0.0, 0.0)
    assert lo < 0.36 and hi > 0.64, (lo, hi)
    assert hi - lo > 1.8 * (item_hi - item_lo)


def test_bootstrap_share_edges() -> None:
    assert bootstrap_share(np.array([], dtype=bool), np.array([])) is None
    assert bootstrap_share(np.ones(5, dtype=bool), np.zeros(5)) == (1.0, 1.0)
    # Sessions pool their items, they are not averaged: 20 sessions of 9 right items and 20 of
    # one wrong item make 180 / 200 = 0.9 (the mean of the session shares would be 0.5).
    hits = np.array([True] * 180 + [False] * 20)
    sessions = np.concatenate([np.repeat(np.arange(20), 9), np.arange(20, 40)])
    lo, hi = bootstrap_share(hits, sessions) or (0.0, 0.0)
    assert 0.75 < lo < 0.9 < hi < 0.97, (lo, hi)
