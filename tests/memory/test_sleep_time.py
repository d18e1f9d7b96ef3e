"""Sleep-time work on a real store, through the scheduler `egomem live` and `egomem serve` use:
old summaries are folded, weak facts fade, never while a session is open, and an interrupted
pass leaves memory as it was."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from typing import Any

import pytest

from egomem.config import Config, load_config
from egomem.memory.consolidate import RUNNING_PREFIX
from egomem.memory.sleep_time import SleepReport, SleepScheduler, scheduler_for, sleep_pass
from egomem.memory.strength import DAY_S
from egomem.retrieval.encoder import TextEncoder
from egomem.schemas import Fact, FactKind
from egomem.store.sqlite import SQLiteStore

T0 = 1_700_000_000.0
NOW = T0 + 90 * DAY_S


class Clock:
    """A monotonic clock the test moves by hand (plumbing)."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def config(**memory: Any) -> Config:
    env = {f"EGOMEM_MEMORY__{k.upper()}": str(v) for k, v in memory.items()}
    return load_config(environ=env)


def remember(store: SQLiteStore, name: str = "Ana", summaries: int = 6) -> str:
    u = store.create_user(name)
    for d in range(summaries):
        text = f"On day {d}, {name} talked with the assistant. {name}: we spoke about topic number {d} at length."
        store.add_fact(Fact(user_id=u.id, kind=FactKind.SUMMARY, text=text, valid_from=T0 + d * DAY_S))
    # A passing remark from months ago, never recalled, and an important fact recalled last week.
    store.add_fact(Fact(user_id=u.id, text="went to a concert once", valid_from=T0, importance=0.0))
    used = store.add_fact(Fact(user_id=u.id, text="is allergic to peanuts", valid_from=T0, importance=1.0))
    store.mark_facts_used([used.id], NOW - 7 * DAY_S)
    return u.id


def snapshot(store: SQLiteStore) -> dict[str, list[Any]]:
    return {t: sorted(map(repr, store.dump_table(t))) for t in ("facts", "history", "identity_keys", "evidence")}


def scheduler(store: SQLiteStore, encoder: TextEncoder, clock: Clock, cfg: Config) -> SleepScheduler:
    s = scheduler_for(store, lambda: encoder, cfg, clock=clock, wall=lambda: NOW)
    assert s is not None
    return s


def test_idle_pass_folds_old_summaries_and_fades_weak_facts(store: SQLiteStore, encoder: TextEncoder) -> None:
    ana = remember(store)
    cfg = config(keep_recent_summaries=2, running_summary_max_words=20, retention_min_strength=0.05)
    clock = Clock()
    sleep = scheduler(store, encoder, clock, cfg)
    # The idle wait is never shorter than a session takes to close and be written (5 + 3 + 2 x 10 s).
    assert sleep.idle_s == cfg.memory.sleep_idle_s == 600.0
    assert sleep.tick() is None  # just started: not idle yet
    clock.t += 600
    report = sleep.tick()
    assert report is not None and not report.interrupted
    rep = report.consolidated[ana]
    assert rep.summaries_folded == 4 and len(rep.faded) == 1 and rep.faded[0][0] == "went to a concert once"
    summaries = store.list_facts(ana, kinds=[FactKind.SUMMARY])
    running = [s for s in summaries if s.text.startswith(RUNNING_PREFIX)]
    assert len(summaries) == 3 and len(running) == 1  # keep_recent_summaries = 2, plus the running one
    assert len(running[0].text.removeprefix(RUNNING_PREFIX).split()) == 20  # running_summary_max_words
    assert "topic number 3" in running[0].text  # over budget, the oldest words go first
    assert [f.text for f in store.list_facts(ana, kinds=[FactKind.FACT])] == ["is allergic to peanuts"]
    assert sleep.tick() is None  # at most once per sleep_interval_s
    clock.t += cfg.memory.sleep_interval_s or 0
    again = sleep.tick()
    assert again is not None and not again.consolidated[ana].changed


def test_without_a_retention_floor_nothing_is_deleted(store: SQLiteStore, encoder: TextEncoder) -> None:
    ana = remember(store)
    report = sleep_pass(store, encoder, config().memory, config().retention, now=NOW + 3 * 365 * DAY_S)
    assert report.consolidated[ana].purged == 0 and len(store.list_facts(ana, kinds=[FactKind.FACT])) == 2


def test_never_while_a_session_is_open_or_the_device_is_active(store: SQLiteStore, encoder: TextEncoder) -> None:
    remember(store)
    clock = Clock()
    sleep = scheduler(store, encoder, clock, config(sleep_idle_s=30))
    assert sleep.idle_s == 30.0  # the session floor, 5 + 3 + 2 x 10 s, is below it
    before = snapshot(store)
    with sleep.session():
        clock.t += 10_000
        assert sleep.tick() is None and snapshot(store) == before
    assert sleep.tick() is None  # the session just ended: activity
    clock.t += 29
    sleep.activity()  # something heard
    clock.t += 29
    assert sleep.tick() is None and snapshot(store) == before
    clock.t += 1
    assert sleep.tick() is not None and snapshot(store) != before


def test_the_idle_wait_covers_a_session_closing(store: SQLiteStore, encoder: TextEncoder) -> None:
    cfg = config(sleep_idle_s=0)
    assert scheduler(store, encoder, Clock(), cfg).idle_s == 5.0 + 3.0 + 2 * 10.0
    assert scheduler_for(store, lambda: encoder, config(sleep_interval_s="null")) is None  # off


def test_a_pass_stops_between_people_when_the_device_wakes(store: SQLiteStore, encoder: TextEncoder) -> None:
    ana, ben = remember(store, "Ana"), remember(store, "Ben")
    asked: list[int] = []

    def awake() -> bool:  # the device wakes while the first person is consolidated
        asked.append(1)
        return len(asked) > 1

    report = sleep_pass(store, encoder, config().memory, config().retention, now=NOW, awake=awake)
    assert report.interrupted and list(report.consolidated) == [ana] and report.retention is None
    assert len(store.list_facts(ben, kinds=[FactKind.SUMMARY])) == 6  # untouched, done next time
    assert "stopped early" in report.lines()[-1]


def test_an_interrupted_pass_finishes_at_the_next_idle_moment(store: SQLiteStore, encoder: TextEncoder) -> None:
    ana, ben = remember(store, "Ana"), remember(store, "Ben")
    clock = Clock()
    sleep = scheduler(store, encoder, clock, config(keep_recent_summaries=2))
    real_work, passes = sleep.work, []

    def talked_to_midway(awake: Callable[[], bool]) -> SleepReport:
        # The first pass hears someone once Ana is done; the second runs undisturbed.
        passes.append(1)
        first = len(passes) == 1
        return real_work(lambda: first and len(store.list_facts(ana, kinds=[FactKind.SUMMARY])) == 3)

    sleep.work = talked_to_midway
    clock.t += 600
    first = sleep.tick()
    assert first is not None and first.interrupted and list(first.consolidated) == [ana]
    clock.t += 600  # idle again, well within sleep_interval_s
    second = sleep.tick()
    assert second is not None and second.consolidated[ben].summaries_folded == 4


def test_an_interrupted_pass_leaves_memory_as_it_was(
    store: SQLiteStore, encoder: TextEncoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    ana = remember(store)
    cfg = config(keep_recent_summaries=2)
    before = snapshot(store)
    real_close, calls = store.close_fact, []

    def crash_on_third(*args: Any, **kwargs: Any) -> Fact:  # the process dies mid-fold
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real_close(*args, **kwargs)

    monkeypatch.setattr(store, "close_fact", crash_on_third)
    with pytest.raises(KeyboardInterrupt):
        sleep_pass(store, encoder, cfg.memory, cfg.retention, now=NOW)
    assert len(calls) == 3 and snapshot(store) == before
    monkeypatch.undo()
    assert sleep_pass(store, encoder, cfg.memory, cfg.retention, now=NOW).consolidated[ana].summaries_folded == 4


def test_dry_run_reports_and_changes_nothing(store: SQLiteStore, encoder: TextEncoder) -> None:
    ana = remember(store)
    cfg = config(keep_recent_summaries=2, retention_min_strength=0.05)
    before = snapshot(store)
    report = sleep_pass(store, encoder, cfg.memory, cfg.retention, now=NOW, dry_run=True)
    assert snapshot(store) == before
    lines = report.lines()
    assert sum("would fold summary" in ln for ln in lines) == 4
    assert any("would fade (delete) 'went to a concert once'" in ln for ln in lines)
    real = sleep_pass(store, encoder, cfg.memory, cfg.retention, now=NOW)
    assert real.consolidated[ana].folded == report.consolidated[ana].folded  # the dry run was exact


class VisitorPool:
    """Stands in for the consent policy's in-memory pool of visitors' keys (plumbing)."""

    def __init__(self) -> None:
        self.keys = 3

    def drop_visitor_keys(self) -> int:
        dropped, self.keys = self.keys, 0
        return dropped


def test_visitor_keys_are_dropped_at_the_first_idle_moment_of_a_new_day(
    store: SQLiteStore, encoder: TextEncoder
) -> None:
    day = [dt.date(2026, 11, 26)]
    clock = Clock()
    sleep = scheduler_for(store, lambda: encoder, config(), clock=clock, wall=lambda: NOW, today=lambda: day[0])
    assert sleep is not None
    pool = VisitorPool()
    sleep.visitor_pools.append(pool)
    clock.t += 600
    sleep.tick()
    assert pool.keys == 3  # same day
    day[0] = dt.date(2026, 11, 27)
    with sleep.session():
        sleep.tick()
    assert pool.keys == 3  # not while someone is there
    clock.t += 600
    sleep.tick()
    assert pool.keys == 0
    keep = scheduler_for(
        store, lambda: encoder, load_config(environ={"EGOMEM_RETENTION__VISITOR_KEYS": "keep"}), clock=clock
    )
    assert keep is not None and not keep.drop_visitors


def test_the_thread_runs_the_pass_and_stops(store: SQLiteStore, encoder: TextEncoder) -> None:
    ana = remember(store)
    clock = Clock()
    sleep = scheduler(store, encoder, clock, config(keep_recent_summaries=2))
    clock.t += 600
    sleep.start(poll_s=0.01)
    try:
        for _ in range(500):
            if sleep.reports:
                break
            time.sleep(0.01)
    finally:
        sleep.stop()
    assert sleep.reports and sleep.reports[0].consolidated[ana].summaries_folded == 4
    assert sleep.tick() is None  # stopped: nothing more runs
