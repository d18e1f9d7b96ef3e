"""The memory-writing queue a process hands its finished sessions to, as the config says.

`memory.queue = "embedded"` (default): jobs in the store's table, run by this process's
low-priority worker thread (memory/job_worker.py). `"fleet"` (the PostgreSQL store): each
job is also deferred to procrastinate, and `egomem worker` processes run it
(runtime/fleet_queue.py; procrastinate is imported only then: the `postgres` extra).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from egomem.config import Config
from egomem.errors import ConfigError, NotFoundError
from egomem.identity.types import Identification
from egomem.memory.items import SessionText
from egomem.memory.job_worker import JobWorker, PerceptionLag
from egomem.memory.jobs import JobResult, MemoryJobs, RetryPolicy
from egomem.memory.manager import MemoryManager, SessionOutcome
from egomem.store.base import REFINE_SUFFIX, MemoryStore

if TYPE_CHECKING:  # procrastinate is optional (the `postgres` extra)
    from egomem.runtime.fleet_queue import FleetQueue

log = logging.getLogger(__name__)

# Told a job's outcome once it is settled, with the worker's result (None: known without running it).
OnDone = Callable[[SessionOutcome, JobResult | None], None]

# At the end of a stream the agent waits this long for its queued sessions to be written (the job in
# hand finishes); what is left stays committed in the store for the next worker. `EgoMem.stop` and
# `EgoMem.run` take another bound (None: until every one is written).
DRAIN_TIMEOUT_S = 900.0
REFINE_NICE = 15  # the model's passes: below the rules' writes (10), far below perception (0)


def memory_jobs(config: Config, store: MemoryStore, manager: MemoryManager, *, source: str = "local") -> MemoryJobs:
    jobs = MemoryJobs(store, manager, RetryPolicy.from_config(config.memory), source=source)
    if config.memory.queue == "fleet":
        jobs.dispatch = fleet_queue(config, jobs).open().defer
    return jobs


def fleet_queue(config: Config, jobs: MemoryJobs) -> FleetQueue:
    from egomem.runtime.fleet_queue import FleetQueue

    dsn = str(getattr(config.store, "dsn", ""))
    if not dsn:
        raise ConfigError('memory.queue = "fleet" needs the PostgreSQL store (store.provider = "postgres", store.dsn)')
    return FleetQueue(jobs, dsn, str(getattr(config.store, "schema_name", "")))


@dataclass(frozen=True)
class Drained:
    """The end-of-stream drain: how long it took and what it left (still in the store, due for the
    next worker: `egomem worker --once`, or this data dir's next agent)."""

    wall_s: float
    left: int  # jobs still pending or running when the drain gave up (0: every session written)
    timeout_s: float | None

    @property
    def complete(self) -> bool:
        return self.left == 0


class AgentQueue:
    """What an agent holds of the queue: its jobs, the embedded worker thread (started with the agent,
    stopped once every job is written), and the perception lag it yields to. `step(t, lockstep)` every
    80 ms step: with `lockstep` (the stream waits for each memory round) the worker never yields, as
    the stream cannot catch up while it waits; after `end_of_stream()` it never yields either (a stopped
    stream is not a perception that is behind: it drains).

    Two ways in: `process` (commit, then wait for the outcome: lockstep runs, `EgoMem.remember`) and
    `enqueue` (commit and return at once; `on_done(outcome, result)` is called when the job is settled,
    in the thread that ran it)."""

    def __init__(self, config: Config, store: MemoryStore, manager: MemoryManager, *, refine: bool = True) -> None:
        """`refine=False`: the model's passes are left to a worker that outlives the agent (the server's,
        one per tenant): the agent writes first writes only, and its drain at the end waits for those."""
        self.jobs = memory_jobs(config, store, manager)
        self.jobs.refine_elsewhere = not refine
        self.yield_lag_s = config.memory.queue_yield_lag_s
        self.lag = PerceptionLag()
        self.lockstep = False
        self.ended = False
        self.worker: JobWorker | None = None
        self.refine_worker: JobWorker | None = None  # the model's passes after the rules' writes
        self.drained: Drained | None = None
        self._lock = threading.Lock()
        self._waiting: dict[str, OnDone] = {}  # job key -> what to call once it is settled
        self.jobs.on_settled.append(self._settled)

    def start(self) -> None:
        self.ended = False
        if self.jobs.dispatch is None:  # the fleet's workers run its jobs
            if self.jobs.manager.refiner is None:
                self.worker = JobWorker(self.jobs, behind=self.behind).start()
                return
            if self.jobs.refine_elsewhere:
                self.worker = JobWorker(self.jobs, behind=self.behind, kind="write").start()
                return
            # A thread for the rules' writes and one, at a lower priority, for the model's passes: a
            # session's memory never waits behind the model's pass over an earlier one.
            self.worker = JobWorker(self.jobs, behind=self.behind, kind="write").start()
            self.refine_worker = JobWorker(self.jobs, behind=self.behind, kind="refine", nice=REFINE_NICE).start()

    def behind(self) -> bool:
        return not self.lockstep and not self.ended and self.lag.behind_s() > self.yield_lag_s

    def step(self, stream_t: float, *, lockstep: bool) -> None:
        self.lag.mark(stream_t)
        self.lockstep = lockstep

    def process(self, session: SessionText, identification: Identification | None) -> SessionOutcome:
        """A finished session to memory, through the queue (committed first, written once); its outcome."""
        return self.jobs.process(session, identification)

    def enqueue(
        self,
        session: SessionText,
        identification: Identification | None,
        on_done: OnDone,
        on_refined: OnDone | None = None,
    ) -> str:
        """Commit a finished session as a job and return (its key) without waiting for extraction; the
        worker runs the jobs in order and `on_done` follows each, `on_refined` the model's pass that
        follows a first write (memory.model_pass = "after"). A session whose job was settled before
        (the same episode again) is reported at once from its row; with the fleet, at once as queued."""
        if self.jobs.dispatch is not None:
            key = self.jobs.submit(session, identification)
            self.jobs.dispatch(key)
            on_done(SessionOutcome(session.episode_id, True, notes=["queued for a fleet worker"]), None)
            return key
        key = self.jobs.key(session.episode_id)

        def settled_before() -> SessionOutcome | None:
            try:
                return self.jobs.settled_outcome(key)
            except NotFoundError:  # the usual case: a new session
                return None

        # A database that does not answer (a restart, a crash) is waited out: the round goes on after it.
        earlier = self.jobs.waiting_out(settled_before, key=key)
        if earlier is not None:
            on_done(earlier, None)
            return key
        with self._lock:
            self._waiting[key] = on_done  # before the submit: the worker may settle it at once
            if on_refined is not None and self.jobs.manager.refiner is not None and not self.jobs.refine_elsewhere:
                self._waiting[key + REFINE_SUFFIX] = on_refined
        try:
            self.jobs.waiting_out(lambda: self.jobs.submit(session, identification), key=key)
        except BaseException:  # not committed: the round keeps the session and hands it over again
            with self._lock:
                self._waiting.pop(key, None)
                self._waiting.pop(key + REFINE_SUFFIX, None)
            raise
        return key

    def _settled(self, result: JobResult) -> None:
        with self._lock:
            callback = self._waiting.pop(result.job.key, None)
            if result.follow_up is None and not result.job.key.endswith(REFINE_SUFFIX):
                self._waiting.pop(result.job.key + REFINE_SUFFIX, None)  # no model pass follows this one
        if callback is None:  # a job somebody waits for in `process`, or not this agent's
            return
        outcome = result.outcome
        if outcome is None:  # failed for good
            outcome = SessionOutcome(result.job.episode_id, False, reason=result.error or "memory job failed")
        callback(outcome, result)

    def end_of_stream(self) -> None:
        """The stream is over: from now on the worker never yields (nothing is behind any more)."""
        self.ended = True

    def backlog(self) -> int:
        """Jobs waiting or running in the store that this agent answers for (not the model's passes
        when a worker outside it runs them)."""
        return self.jobs.owed(self.jobs.stats())

    def stop(self, timeout_s: float | None = DRAIN_TIMEOUT_S) -> Drained | None:
        """Stop the worker once every job is written, or after `timeout_s` (the job in hand finishes; what
        is left stays in the store and is logged); the drain's report."""
        self.end_of_stream()
        if self.worker is None:
            return None
        t0 = time.perf_counter()
        # The drain waits for the model's passes too, unless a worker outside the agent runs them.
        self.worker.stop(drain=True, timeout_s=timeout_s)
        self.worker = None
        if self.refine_worker is not None:
            self.refine_worker.stop(drain=False)
            self.refine_worker = None
        left = self.backlog()
        self.drained = Drained(time.perf_counter() - t0, left, timeout_s)
        if left:
            log.warning(
                "memory queue: %d session(s) still waiting after the %.0f s drain; they stay in the store for the"
                " next worker (egomem worker --once)",
                left,
                timeout_s or 0.0,
            )
        return self.drained
