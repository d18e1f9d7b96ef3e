"""The memory-writing queue a process hands its finished sessions to, as the config says.

`memory.queue = "embedded"` (default): jobs in the store's table, run by this process's
low-priority worker thread (memory/job_worker.py). `"fleet"` (the PostgreSQL store): each
job is also deferred to procrastinate, and `egomem worker` processes run it
(runtime/fleet_queue.py; procrastinate is imported only then: the `postgres` extra).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from egomem.config import Config
from egomem.errors import ConfigError
from egomem.identity.types import Identification
from egomem.memory.items import SessionText
from egomem.memory.job_worker import JobWorker, PerceptionLag
from egomem.memory.jobs import MemoryJobs, RetryPolicy
from egomem.memory.manager import MemoryManager, SessionOutcome
from egomem.store.base import MemoryStore

if TYPE_CHECKING:  # procrastinate is optional (the `postgres` extra)
    from egomem.runtime.fleet_queue import FleetQueue


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


class AgentQueue:
    """What an agent holds of the queue: its jobs, the embedded worker thread (started with the agent,
    stopped once every job is written), and the perception lag it yields to. `step(t, lockstep)` every
    80 ms step: with `lockstep` (the stream waits for each memory round) the worker never yields, as
    the stream cannot catch up while it waits."""

    def __init__(self, config: Config, store: MemoryStore, manager: MemoryManager) -> None:
        self.jobs = memory_jobs(config, store, manager)
        self.yield_lag_s = config.memory.queue_yield_lag_s
        self.lag = PerceptionLag()
        self.lockstep = False
        self.worker: JobWorker | None = None

    def start(self) -> None:
        if self.jobs.dispatch is None:  # the fleet's workers run its jobs
            self.worker = JobWorker(self.jobs, behind=self.behind).start()

    def behind(self) -> bool:
        return not self.lockstep and self.lag.behind_s() > self.yield_lag_s

    def step(self, stream_t: float, *, lockstep: bool) -> None:
        self.lag.mark(stream_t)
        self.lockstep = lockstep

    def process(self, session: SessionText, identification: Identification | None) -> SessionOutcome:
        """A finished session to memory, through the queue (committed first, written once)."""
        return self.jobs.process(session, identification)

    def stop(self) -> None:
        if self.worker is not None:
            self.worker.stop()
            self.worker = None
