"""The scorer of `bench serve`'s database crash (egomem_eval/restart_check.py): a result that loses a
committed row, or leaves a failed memory job unwritten, is counted wrong; a whole one passes."""

from __future__ import annotations

from typing import Any

from egomem_eval.restart_check import judge_crash, missing_rows

BEFORE: dict[str, set[Any]] = {"users": {"u1", "u2"}, "facts": {"f1", "f2", "f3"}, "episodes": {"e1"}, "keys": {1, 2}}
GROWN: dict[str, set[Any]] = {
    "users": {"u1", "u2"},
    "facts": {"f1", "f2", "f3", "f4"},
    "episodes": {"e1", "e2"},
    "keys": {1, 2, 3},
}
FAILURES = {"rounds_failed": 0, "rounds_recovered": 0, "store_failures": 1, "store_waits": 2}


def _whole(**change: Any) -> dict[str, Any]:
    result: dict[str, Any] = {
        "before": BEFORE,
        "after_recovery": BEFORE,
        "at_end": GROWN,
        "jobs": {"local:e1": "done", "local:e2": "done"},
        "hit": {"local:e2"},
        "retried": {"local:e2"},
        "failures": {**FAILURES, "retries_run": 1, "retries_done": 1},
        "devices": 4,
        "sessions_completed": 4,
        "workers_alive": [True, True],
    }
    return {**result, **change}


def test_a_crash_that_lost_nothing_and_retried_everything_passes() -> None:
    verdict = judge_crash(**_whole())
    assert verdict.ok and verdict.problems == []


def test_a_committed_row_missing_after_recovery_is_counted_wrong() -> None:
    recovered = {**BEFORE, "facts": {"f1", "f3"}}  # f2 was committed before the kill
    assert missing_rows(BEFORE, recovered) == {"users": 0, "facts": 1, "episodes": 0, "keys": 0}
    verdict = judge_crash(**_whole(after_recovery=recovered))
    assert not verdict.ok and verdict.problems == ["committed rows missing after recovery: {'facts': 1}"]


def test_a_committed_row_gone_by_the_end_is_counted_wrong() -> None:
    verdict = judge_crash(**_whole(at_end={**GROWN, "keys": {1, 3}}))
    assert not verdict.ok and verdict.problems == ["committed rows missing at the end: {'keys': 1}"]


def test_a_failed_memory_job_never_completed_is_counted_wrong() -> None:
    never_run_again = _whole(jobs={"local:e1": "done", "local:e2": "running"}, retried=set())
    verdict = judge_crash(**never_run_again)
    assert not verdict.ok
    assert verdict.problems == [
        "1 memory job(s) not written at the end (running 1): ['local:e2']",
        "1 job(s) the outage hit never tried again: ['local:e2']",
        "1 job(s) the outage hit not written: ['local:e2']",
    ]


def test_a_job_the_outage_hit_that_is_not_in_the_store_is_counted_wrong() -> None:
    """A hand-over that waited and gave up: its key never reached the store, so it is not written."""
    verdict = judge_crash(**_whole(hit={"local:e2", "local:e9"}, retried={"local:e2", "local:e9"}))
    assert not verdict.ok and verdict.problems == ["1 job(s) the outage hit not written: ['local:e9']"]


def test_a_failed_round_that_never_went_through_a_lost_session_and_a_dead_worker_are_counted_wrong() -> None:
    failures = {**FAILURES, "rounds_failed": 3, "retries_run": 1, "retries_done": 1}
    verdict = judge_crash(**_whole(failures=failures, sessions_completed=3, workers_alive=[True, False]))
    assert not verdict.ok
    assert verdict.problems == [
        "3 memory round(s) failed and none went through afterwards",
        "1 of 4 device session(s) never finished",
        "workers alive: [True, False]",
    ]


def test_the_crash_bench_waits_for_the_backlog_within_its_bound() -> None:
    """bench serve's crash waits for the phase's jobs to settle before judging (a slow model's
    backlog is not a lost job), and says when they did not within the bound."""
    from egomem.bench._serve_crash import wait_for_jobs

    states = iter([{"k1": ("pending", 0)}, {"k1": ("running", 1)}, {"k1": ("done", 1)}])
    assert wait_for_jobs(lambda: next(states), limit_s=5.0, poll_s=0.0) is not None
    failed = {"k1": ("failed", 3), "k2": ("done", 1)}  # settled: failed is an end, judged as such
    assert wait_for_jobs(lambda: failed, limit_s=5.0, poll_s=0.0) == 0.0
    assert wait_for_jobs(lambda: {"k1": ("pending", 0)}, limit_s=0.05, poll_s=0.01) is None
