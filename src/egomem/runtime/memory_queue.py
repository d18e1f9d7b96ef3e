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
from egomem.memory.jobs import MemoryJobs, RetryPolicy
from egomem.memory.manager import MemoryManager
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
