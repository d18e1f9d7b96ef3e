"""`bench realtime`'s live pace: the wall-clock record it scores from (perception lag, memory lag, the
visits moved onto the wall axis) and the options it takes. No models: times written here."""

from __future__ import annotations

import pytest

from egomem.bench import BenchOptions
from egomem.bench._visits import Visit, score_visits
from egomem.bench.realtime import _LiveClock, _pool_live, run
from egomem.errors import InputError
from egomem.stream.clock import STEP_S


def _clock(fed: list[float], done: list[float]) -> _LiveClock:
    clock = _LiveClock()
    clock.fed, clock.done = fed, done
    return clock


def test_perception_lag_is_how_late_each_step_finished() -> None:
    # Steps due at 0.08, 0.16, 0.24, 0.32: the second finished 0.5 s late, the others on time.
    clock = _clock([0.0, 0.08, 0.66, 0.70], [0.05, 0.66, 0.70, 0.30])
    lag = clock.perception_lag()
    assert lag.tolist() == pytest.approx([0.0, 0.66 - 2 * STEP_S, 0.70 - 3 * STEP_S, 0.0])
    assert lag.max() == pytest.approx(0.50)


def test_memory_lag_runs_from_the_step_that_held_the_sessions_end() -> None:
    fed = [i * STEP_S + 0.01 for i in range(200)]  # the loop on time, 10 ms after each step's start
    clock = _clock(fed, fed)
    clock.written = [(12.0, 4.0), (70.0, 10.0)]  # written at wall 12 s and 70 s; sessions ended at 4 s and 10 s
    # queued 6 s, ran 1 s, its worker yielded 3 s before the claim; queued 50 s, ran 2 s, yielded 30 s
    clock.jobs = [(6.0, 1.0, 3.0, 0), (50.0, 2.0, 30.0, 2)]  # the second left open 2 rounds for a turn
    assert clock.memory_lag() == pytest.approx([12.0 - 4.01, 70.0 - 10.01])
    assert clock.lag_by_session() == [
        {"end": 4.0, "lag": 8.0, "handover": 2.0, "waited": 5.0, "yielded": 3.0, "run": 1.0, "held_rounds": 0},
        {"end": 10.0, "lag": 60.0, "handover": 10.0, "waited": 48.0, "yielded": 30.0, "run": 2.0, "held_rounds": 2},
    ]
    assert clock.fed_at(1e9) == fed[-1]  # past the stream's end: its last step


def test_on_the_wall_axis_a_slow_loop_adds_to_the_latency_and_a_missed_visit_counts_whole() -> None:
    """Visits go onto the wall axis through the moments their steps reached the agent (the loop fell 2 s
    behind at stream time 2 s, so B's visit starts at wall 4 s); B, shown A's user, is missed and counts
    the visit's whole wall length."""
    fed = [i * STEP_S for i in range(100)]  # 8 s of steps
    fed = [t if t < 2.0 else t + 2.0 for t in fed]  # the loop fell 2 s behind at stream time 2 s
    clock = _clock(fed, fed)
    visits = [Visit(clock.fed_at(0.0), clock.fed_at(2.0), "A"), Visit(clock.fed_at(2.0), clock.fed_at(7.9), "B")]
    m = score_visits(visits, [(1.0, "u1"), (7.0, "u1")])  # B is taken for A's user: wrong, missed
    assert m["latencies"] == pytest.approx([1.0, clock.fed_at(7.9) - clock.fed_at(2.0)])
    assert m["level1_missed_visits"] == 1 and m["identity"]["wrong_switches"] == 1


def test_live_figures_pool_as_means_worst_lags_and_all_drained() -> None:
    base = {"cpu_s_per_stream_s": 1.0, "rtf_stream": 1.0, "rtf_perception_dialog": 0.5, "drain_s": 10.0}
    a = base | {"memory_backlog_end_of_stream": 2, "memory_backlog_after_drain": 0, "drained": True}
    a |= {"perception_lag_s_max": 0.4, "perception_lag_s_p95": 0.1, "memory_lag_s_p50": 30.0, "memory_lag_s_p95": 60}
    b = a | {"drain_s": 30.0, "memory_backlog_after_drain": 1, "drained": False, "memory_lag_s_p95": 90.0}
    pooled: dict[str, object] = {}
    _pool_live({"0": a, "1": b}, pooled)
    assert pooled["drain_s"] == 20.0 and pooled["memory_backlog_after_drain"] == 0.5
    assert pooled["memory_lag_s_p95"] == 90.0 and pooled["drained"] is False


@pytest.mark.parametrize("extra", [{"pace": "fast"}, {"drain": "long"}, {"seeds": ""}])
def test_bad_options_are_one_clear_error(extra: dict[str, str]) -> None:
    with pytest.raises(InputError):
        run(BenchOptions(extra=extra))
