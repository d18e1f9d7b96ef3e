"""The embedded queue's worker: one low-priority thread that runs memory jobs and steps aside
while perception falls behind.

Low priority: on Linux the thread lowers its own nice value (`os.setpriority` on its
thread id; the threads a local model starts from it inherit it), so when the CPU is short
the scheduler serves the stream and dialog first. Yielding: before each job, and while
`behind()` says perception is late (the agent's definition: its stream loop more than
`yield_lag_s` behind the stream clock, `PerceptionLag`), the worker waits instead of
claiming, for at most `max_yield_s` at a stretch (then one job runs: memory is never starved
for good). A job already running is not interrupted: extraction is one model call. A caller
that waits for its jobs while the stream is paused (a lockstep replay) must not ask it to
yield: the stream cannot catch up while it waits.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable

from egomem.errors import StoreUnreachable
from egomem.memory.jobs import JobResult, MemoryJobs
from egomem.store.base import JobKind

log = logging.getLogger(__name__)

IDLE_WAIT_S = 1.0  # how often an idle worker looks for due jobs (a submit wakes it at once)
YIELD_WAIT_S = 0.2
# Perception that stays behind (a CPU too small for the stream) must not starve memory for ever:
# after this long yielding, one job runs anyway (the backlog it would build shows in `egomem status`).
MAX_YIELD_S = 30.0


class PerceptionLag:
    """How far the stream loop runs behind the stream clock: `mark(t)` each step (t: stream seconds);
    `behind_s()` is the wall time since the first mark minus the stream time of the last one. A replay
    as fast as possible is never behind (its stream clock runs ahead of the wall)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._origin: float | None = None
        self._t = 0.0

    def mark(self, stream_t: float) -> None:
        if self._origin is None:
            self._origin = self.clock() - stream_t
        self._t = stream_t

    def behind_s(self) -> float:
        return 0.0 if self._origin is None else max(0.0, self.clock() - self._origin - self._t)


class JobWorker:
    def __init__(
        self,
        jobs: MemoryJobs,
        *,
        behind: Callable[[], bool] = lambda: False,
        nice: int = 10,
        on_result: Callable[[JobResult], None] | None = None,
        max_yield_s: float = MAX_YIELD_S,
        kind: JobKind | None = None,
    ) -> None:
        """`kind`: only first writes or only the model's refining passes (an agent runs one worker of
        each, so a session's memory never waits behind a model's pass); None: both, first writes first."""
        self.jobs = jobs
        self.kind = kind
        self.behind = behind
        self.nice = nice
        self.max_yield_s = max_yield_s
        self.on_result = on_result
        self.yielded_s = 0.0  # time spent waiting for perception to catch up
        self._stop = threading.Event()
        self._draining = False  # stopping: perception is over, no more yielding
        self._thread: threading.Thread | None = None

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> JobWorker:
        self._stop.clear()
        name = "egomem-memory-refine" if self.kind == "refine" else "egomem-memory-jobs"
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()
        if self.kind == "refine":
            self.jobs.refine_worker = self
        else:
            self.jobs.worker = self
        return self

    def stop(self, *, drain: bool = True, timeout_s: float | None = None) -> None:
        """Stop the thread; with `drain`, after the jobs due now are done (what is left waits in the store)."""
        if drain and self.alive:
            self._draining = True
            self.jobs.submitted.set()
            with contextlib.suppress(TimeoutError):
                self.jobs.drain(timeout_s=timeout_s)
        self._stop.set()
        self.jobs.submitted.set()
        if self._thread is not None:
            self._thread.join()
        if self.jobs.worker is self:
            self.jobs.worker = None
        if self.jobs.refine_worker is self:
            self.jobs.refine_worker = None

    def _loop(self) -> None:
        with contextlib.suppress(AttributeError, OSError):  # not Linux, or not allowed: normal priority
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), self.nice)
        yielding = 0.0  # this stretch of yielding, seconds
        while not self._stop.is_set():
            if not self._draining and yielding < self.max_yield_s and self.behind():
                t0 = time.monotonic()
                self._stop.wait(YIELD_WAIT_S)
                waited = time.monotonic() - t0
                self.yielded_s += waited
                yielding += waited
                continue
            stepped_aside, yielding = yielding, 0.0
            self.jobs.submitted.clear()
            try:
                result = self.jobs.run_next(kind=self.kind, yielded_s=stepped_aside)
            except StoreUnreachable as exc:  # the database is down or restarting: keep the thread, try again
                log.warning("memory job worker: %s", exc)
                self._stop.wait(IDLE_WAIT_S)
                continue
            except Exception:  # any other store failure: keep the thread, try again later
                log.exception("memory job worker")
                self._stop.wait(IDLE_WAIT_S)
                continue
            if result is None:
                self.jobs.submitted.wait(IDLE_WAIT_S)
            elif self.on_result is not None:
                self.on_result(result)
