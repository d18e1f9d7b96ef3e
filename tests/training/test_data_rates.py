"""Augmentation and interruption happen at the configured rates (many seeded draws; the
tolerance is about 4 binomial standard deviations), and voices are never shared."""

from __future__ import annotations

import numpy as np

from egomem_eval.voices import Voice
from egomem_training.data.audio import AugmentConfig, assign_voices, draw_augmentation
from egomem_training.data.plan import STOP_AFTER, LineTokens, plan_session

N = 4000


def _tolerance(p: float, n: int) -> float:
    return 4 * float(np.sqrt(p * (1 - p) / n))


def test_echo_background_noise_rates_and_ranges() -> None:
    cfg = AugmentConfig()
    rng = np.random.default_rng(1)
    draws = [draw_augmentation(rng, cfg) for _ in range(N)]
    for name, p in (("echo", cfg.echo_p), ("background", cfg.background_p), ("noise", cfg.noise_p)):
        rate = np.mean([getattr(d, name) for d in draws])
        assert abs(rate - p) < _tolerance(p, N), (name, rate)
    gains = np.array([d.echo_gain for d in draws])
    delays = np.array([d.echo_delay_s for d in draws])
    assert gains.min() >= 0.0 and gains.max() <= 0.2 and abs(gains.mean() - 0.1) < 0.005
    assert delays.min() >= 0.1 and delays.max() <= 0.5 and abs(delays.mean() - 0.3) < 0.01


def test_interruption_rate_and_cut() -> None:
    rng = np.random.default_rng(2)
    line = LineTokens(
        level=0, user_samples=16000, reply_samples=3 * 16000, answer_tokens=list(range(10)), query_tokens=[]
    )
    interrupted, chances = 0, 0
    for _ in range(N // 4):
        plan = plan_session(rng, 0, "s", "u", [line] * 5, start=10, text_busy=0, interrupt_p=0.3)
        for t, nxt in zip(plan.turns, plan.turns[1:], strict=False):
            chances += 1
            assert t.interrupted == t.interrupt_drawn  # every 3 s reply is long enough to cut
            if t.interrupted:
                interrupted += 1
                assert t.reply_start < nxt.user_start and t.reply_end == nxt.user_start + STOP_AFTER
            else:
                assert nxt.user_start > t.reply_end  # the next turn waits for the reply
        assert not plan.turns[-1].interrupt_drawn  # the last turn has nothing to be cut by
    assert chances == 4 * (N // 4)
    assert abs(interrupted / chances - 0.3) < _tolerance(0.3, chances)


def test_short_replies_are_never_cut() -> None:
    rng = np.random.default_rng(3)
    line = LineTokens(level=0, user_samples=16000, reply_samples=8000, answer_tokens=[1, 2], query_tokens=[])
    plan = plan_session(rng, 0, "s", "u", [line] * 20, start=0, text_busy=0, interrupt_p=1.0)
    assert all(t.interrupt_drawn and not t.interrupted for t in plan.turns[:-1])


def test_voices_are_distinct_per_stream() -> None:
    pool = [Voice("espeak-ng", f"v{i}", "f") for i in range(6)]
    rng = np.random.default_rng(4)
    seen: set[str] = set()
    for _ in range(500):
        got = assign_voices(rng, ["a", "b", "c", "d"], pool)
        ids = [v.id for v in got.values()]
        assert len(set(ids)) == 4
        seen |= set(ids)
    assert seen == {v.id for v in pool}  # every voice gets used across streams
