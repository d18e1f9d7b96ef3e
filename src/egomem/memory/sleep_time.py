"""Sleep-time work: consolidation and retention, run when nobody is talking to the device.

`sleep_pass` is one pass over a store: every real person's consolidation (memory/consolidate.py:
duplicates merged, old summaries folded into the running summary, facts under
`retention_min_strength` purged), then biometric key retention (memory/retention.py). Each
person's consolidation is its own transaction and the retention is one, so a pass stopped
anywhere leaves every person either done or untouched. Between people the pass asks `awake()`
and stops when the device woke up: sleep-time work never competes with a conversation.

`SleepScheduler` decides when, for one store: the device has been idle for `sleep_idle_s`
(nothing heard, said, seen or written: the caller reports each such event with `activity()`),
no session is open (`session()` marks one open while its block runs) and the last pass is at
least `sleep_interval_s` old. The first idle moment of a new local day also drops the keys that
visitors' in-memory pools hold (`[retention] visitor_keys`). `egomem live` ticks one scheduler
in a thread; `egomem serve` ticks one per tenant (server/sleep.py).
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol

from egomem.config import Config, MemoryConfig, RetentionConfig
from egomem.memory import held, retention
from egomem.memory.consolidate import ConsolidationReport, consolidate
from egomem.memory.updater import Encoder
from egomem.store.base import MemoryStore

log = logging.getLogger(__name__)


@dataclass
class SleepReport:
    at: float
    dry_run: bool = False
    consolidated: dict[str, ConsolidationReport] = field(default_factory=dict)
    retention: retention.RetentionReport | None = None
    interrupted: bool = False  # stopped between people because the device woke up
    held_dropped: list[str] = field(default_factory=list)  # held sessions never settled (memory/held.py)

    def lines(self, name_of: Callable[[str], str] = str) -> list[str]:
        """What was (or, in a dry run, would be) folded, merged, faded and deleted, per person."""
        would = "would " if self.dry_run else ""
        out: list[str] = []
        for user_id, rep in self.consolidated.items():
            who = name_of(user_id)
            if rep.skipped:
                out.append(f"{who}: skipped (another worker is consolidating them)")
            out += [f"{who}: {would}merge {m}" for m in rep.merges]
            out += [f"{who}: {would}fold summary {s!r}" for s in rep.folded]
            out += [f"{who}: {would}fade (delete) {t!r}, strength {s:.3f}" for t, s in rep.faded]
        if self.retention is not None:
            out += [f"{would}delete {e.describe(self.at)}" for e in self.retention.expired]
        out += [f"{would}drop held session {eid} (identity never settled)" for eid in self.held_dropped]
        if self.interrupted:
            out.append("stopped early: the device woke up (the rest waits for the next idle time)")
        return out or ["nothing to do"]


def sleep_pass(
    store: MemoryStore,
    encoder: Encoder,
    memory: MemoryConfig,
    keep: RetentionConfig,
    *,
    now: float,
    dry_run: bool = False,
    awake: Callable[[], bool] = lambda: False,
    held_s: float | None = None,
) -> SleepReport:
    """`held_s`: held sessions older than this are dropped (`identity.unsure_hold_s`); None: left alone."""
    report = SleepReport(at=now, dry_run=dry_run)
    if held_s is not None:
        report.held_dropped = held.drop_stale(store, now=now, older_than_s=held_s, dry_run=dry_run)
    for user in store.list_users(include_placeholders=False):  # placeholders hold only what others said
        if awake():
            report.interrupted = True
            return report
        report.consolidated[user.id] = consolidate(store, user.id, encoder, memory, now=now, dry_run=dry_run)
    if awake():
        report.interrupted = True
        return report
    report.retention = retention.apply(store, keep, now=now, dry_run=dry_run)
    return report


class VisitorKeys(Protocol):
    """An in-memory pool of keys of people who have not agreed to be remembered."""

    def drop_visitor_keys(self) -> int: ...


class HasVisitorKeys(Protocol):
    """What holds such a pool (the agent, through its consent gate)."""

    def visitor_keys(self) -> VisitorKeys | None: ...


class SleepScheduler:
    """When sleep-time work runs for one store (see the module's docstring)."""

    def __init__(
        self,
        work: Callable[[Callable[[], bool]], SleepReport],
        *,
        idle_s: float,
        interval_s: float,
        drop_visitors: bool = True,
        clock: Callable[[], float] = time.monotonic,
        today: Callable[[], dt.date] = dt.date.today,
    ) -> None:
        self.work, self.idle_s, self.interval_s, self.drop_visitors = work, idle_s, interval_s, drop_visitors
        self.clock, self.today = clock, today
        self.visitor_pools: list[VisitorKeys] = []
        self.reports: list[SleepReport] = []  # the passes run, newest last (the last few kept)
        self._lock = threading.Lock()
        self._running = threading.Lock()
        self._open = 0
        self._last_activity = clock()
        self._last_run: float | None = None
        self._day = today()
        self._stopping = False
        self._stop_event: threading.Event | None = None
        self._thread: threading.Thread | None = None

    # -- what the device reports --------------------------------------------------------
    def watch_visitors(self, agent: HasVisitorKeys) -> None:
        """Drop this agent's in-memory visitor keys at each day's end (retention.visitor_keys)."""
        pool = agent.visitor_keys()
        if pool is not None:
            with self._lock:
                self.visitor_pools.append(pool)

    def unwatch_visitors(self, agent: HasVisitorKeys) -> None:
        pool = agent.visitor_keys()
        with self._lock:
            self.visitor_pools = [p for p in self.visitor_pools if p is not pool]

    def activity(self) -> None:
        with self._lock:
            self._last_activity = self.clock()

    @contextmanager
    def session(self) -> Iterator[None]:
        """Marks a session open while the block runs (activity at both ends)."""
        with self._lock:
            self._open += 1
            self._last_activity = self.clock()
        try:
            yield
        finally:
            with self._lock:
                self._open -= 1
                self._last_activity = self.clock()

    @property
    def last_activity(self) -> float:
        with self._lock:
            return self._last_activity

    # -- deciding ---------------------------------------------------------------------------
    def idle(self) -> bool:
        with self._lock:
            return not self._stopping and self._open == 0 and self.clock() - self._last_activity >= self.idle_s

    def due(self) -> bool:
        return self.idle() and (self._last_run is None or self.clock() - self._last_run >= self.interval_s)

    def tick(self) -> SleepReport | None:
        """Run what is due now (at most one pass at a time); the pass's report, if one ran."""
        if not self.idle() or not self._running.acquire(blocking=False):
            return None
        try:
            if self.drop_visitors and self.today() != self._day:
                self._day = self.today()
                dropped = sum(p.drop_visitor_keys() for p in self.visitor_pools)
                log.info("sleep-time: a new day: dropped %d visitor key(s) held in memory", dropped)
            if not self.due():
                return None
            started, previous = self.clock(), self._last_run
            self._last_run = started  # a pass that fails waits for the next interval
            report = self.work(lambda: self._woke_since(started))
            if report.interrupted:  # the rest runs at the next idle moment, not an interval later
                self._last_run = previous
            self.reports = [*self.reports[-9:], report]
            return report
        finally:
            self._running.release()

    def _woke_since(self, started: float) -> bool:
        with self._lock:
            return self._stopping or self._open > 0 or self._last_activity > started

    # -- a thread that ticks -------------------------------------------------------------
    def start(self, poll_s: float | None = None) -> threading.Thread:
        """Tick in a thread every `poll_s` (default: 5 s, or half the interval when that is shorter)."""
        poll_s = poll_interval(self.interval_s) if poll_s is None else poll_s
        stop = self._stop_event = threading.Event()
        self._thread = threading.Thread(target=lambda: self._loop(stop, poll_s), name="egomem-sleep", daemon=True)
        self._thread.start()
        return self._thread

    def _loop(self, stop: threading.Event, poll_s: float) -> None:
        while not stop.wait(poll_s):
            try:
                self.tick()
            except Exception as exc:  # a failed pass is rolled back; try again next interval
                log.warning("sleep-time work failed (nothing half-done was kept): %s", exc)

    def stop(self) -> None:
        """Stop ticking; a pass in progress stops after the person it is on."""
        with self._lock:
            self._stopping = True
        if self._stop_event is not None:
            self._stop_event.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()


def poll_interval(interval_s: float) -> float:
    """How often a schedule looks whether a pass is due: 5 s, or half the interval when shorter."""
    return min(5.0, interval_s / 2)


def store_work(
    store: MemoryStore,
    encoder: Callable[[], Encoder],
    memory: MemoryConfig,
    keep: RetentionConfig,
    wall: Callable[[], float] = time.time,
    held_s: float | None = None,
) -> Callable[[Callable[[], bool]], SleepReport]:
    """The pass a scheduler runs on one store (`encoder` is asked for only when a pass runs)."""

    def work(awake: Callable[[], bool]) -> SleepReport:
        report = sleep_pass(store, encoder(), memory, keep, now=wall(), awake=awake, held_s=held_s)
        for line in report.lines():
            log.info("sleep-time: %s", line)
        return report

    return work


def scheduler_for(
    store: MemoryStore,
    encoder: Callable[[], Encoder],
    config: Config,
    *,
    clock: Callable[[], float] = time.monotonic,
    wall: Callable[[], float] = time.time,
    today: Callable[[], dt.date] = dt.date.today,
) -> SleepScheduler | None:
    """The scheduler of one store as configured; None when sleep-time work is off."""
    mem, run = config.memory, config.runtime
    if mem.sleep_interval_s is None:
        return None
    # Never shorter than the time a conversation session takes to be closed and written.
    idle = max(mem.sleep_idle_s, run.session_merge_gap_s + run.session_margin_s + 2 * run.memory_interval_s)
    return SleepScheduler(
        store_work(store, encoder, mem, config.retention, wall, held_s=config.identity.unsure_hold_s),
        idle_s=idle,
        interval_s=mem.sleep_interval_s,
        drop_visitors=config.retention.visitor_keys == "end_of_day",
        clock=clock,
        today=today,
    )
