"""The fleet's memory-writing queue: procrastinate, on the store's own PostgreSQL.

The session itself is the store's job row (memory/jobs.py: committed before extraction,
exactly-once by finishing it in the memory's own transaction). procrastinate carries
only its key, `egomem.extract_session(key)`, to whichever `egomem worker` takes it
(several hosts, or one beside a GPU model server): it gives the fleet notification
(LISTEN/NOTIFY), one taker per job (row locks), retries on a schedule, worker heartbeats
and the recovery of jobs whose worker died. Why procrastinate and not pgqueuer:
docs/memory-queue.md.

- `defer(key)`: once per key while it waits (procrastinate's queueing lock).
- A job whose store row is not due (in a backoff after a model failure, or held by
  another worker) raises `NotDue` and procrastinate runs it again when it is.
- A periodic task (every minute) retries the jobs of workers that stopped sending
  heartbeats and defers every store job that procrastinate does not hold: a crash
  between the store's commit and the defer loses nothing.

procrastinate's tables live in the store's schema (`search_path`), created with the
schema SQL of the installed procrastinate on first use, under an advisory lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import procrastinate
import psycopg
from procrastinate import exceptions as pexc
from procrastinate.jobs import Job
from procrastinate.retry import BaseRetryStrategy, RetryDecision
from psycopg import sql as pgsql

from egomem.errors import StoreError
from egomem.memory.jobs import MemoryJobs

log = logging.getLogger(__name__)

QUEUE = "egomem-memory"
TASK = "egomem.extract_session"
REQUEUE_TASK = "egomem.requeue_memory_jobs"
HEARTBEAT_S = 5.0  # how often a worker says it is alive
STALLED_AFTER_S = 30.0  # a worker silent this long is dead: its jobs are retried


class NotDue(Exception):
    """The store's job is not due yet (backoff, or another worker holds it): run again in `wait_s`."""

    def __init__(self, key: str, wait_s: float) -> None:
        super().__init__(f"memory job {key} is not due for {wait_s:.0f} s")
        self.wait_s = wait_s


class StoreSchedule(BaseRetryStrategy):
    """Not due: again when it is. Anything else (the store unreachable, a bug): exponential, at most 10 tries."""

    def get_retry_decision(self, *, exception: BaseException, job: Job) -> RetryDecision | None:
        if isinstance(exception, NotDue):
            return RetryDecision(retry_in={"seconds": max(1, round(exception.wait_s))})
        if job.attempts >= 10:
            return None
        return RetryDecision(retry_in={"seconds": min(300, 2 ** (job.attempts + 1))})


class FleetQueue:
    """procrastinate for the jobs of `jobs` (a store on PostgreSQL at `dsn`, schema `schema`)."""

    def __init__(self, jobs: MemoryJobs, dsn: str, schema: str = "") -> None:
        if not jobs.store.capabilities.concurrent_writers:
            raise StoreError("the fleet queue needs the PostgreSQL store (store.provider = 'postgres')")
        self.jobs = jobs
        self.dsn = dsn
        self.schema = schema
        options = {"options": f"-c search_path={schema},public"} if schema else {}
        connector = procrastinate.PsycopgConnector(conninfo=dsn, kwargs=options)
        self.app = procrastinate.App(connector=connector)
        self.extract = self.app.task(name=TASK, queue=QUEUE, retry=StoreSchedule())(self._extract)
        requeue = self.app.task(name=REQUEUE_TASK, queue=QUEUE, queueing_lock=REQUEUE_TASK)(self._requeue_task)
        self.app.periodic(cron="* * * * *", periodic_id="egomem-requeue")(requeue)

    # -- procrastinate's schema ------------------------------------------------------------
    def ensure_schema(self) -> None:
        """Create procrastinate's tables in the store's schema once (several workers may start together)."""
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            if self.schema:
                conn.execute(pgsql.SQL("SET search_path TO {}, public").format(pgsql.Identifier(self.schema)))
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(hashtext('egomem-procrastinate:' || current_schema()))")
                row = conn.execute("SELECT to_regclass('procrastinate_jobs')").fetchone()
                if row is None or row[0] is None:
                    conn.execute(self.app.schema_manager.get_schema())  # procrastinate's own SQL, as shipped

    # -- producers -------------------------------------------------------------------------
    def defer(self, key: str) -> None:
        """Hand a stored job to the fleet (nothing happens when it already waits there)."""
        with contextlib.suppress(pexc.AlreadyEnqueued):
            self.extract.configure(queueing_lock=key).defer(key=key)

    def requeue(self) -> int:
        """Defer every store job that waits (pending, or held by a worker that may be gone); how many."""
        keys = self.jobs.store.job_keys("pending") + self.jobs.store.job_keys("running")
        for key in keys:
            self.defer(key)
        return len(keys)

    # -- tasks -------------------------------------------------------------------------------
    def _extract(self, key: str) -> None:
        result = self.jobs.run_next(key=key)
        if result is not None and result.follow_up is not None:
            self.defer(result.follow_up)  # the model's pass over what the rules just wrote
        job = self.jobs.store.job(key)
        if job.status in ("done", "failed"):
            return  # done now, or before (a second delivery of the same key writes nothing)
        now = self.jobs.clock()
        if job.status == "pending":
            raise NotDue(key, max(1.0, job.not_before - now))
        raise NotDue(key, max(1.0, min(60.0, (job.claimed_at or now) + self.jobs.policy.lease_s - now)))

    async def _requeue_task(self, timestamp: int) -> None:
        for job in await self.app.job_manager.get_stalled_jobs(seconds_since_heartbeat=STALLED_AFTER_S):
            try:
                await self.app.job_manager.retry_job(job)
            except pexc.ProcrastinateException as exc:  # e.g. the key was deferred again meanwhile
                log.warning("could not retry the stalled job %s: %s", job.id, exc)
        await asyncio.to_thread(self.requeue)

    # -- workers -----------------------------------------------------------------------------
    def run_worker(self, *, wait: bool = True, name: str | None = None) -> None:
        """Take jobs until stopped (SIGINT/SIGTERM); `wait=False`: until the queue is empty."""
        self.ensure_schema()

        async def work() -> None:
            async with self.app.open_async():
                await self._requeue_task(0)
                options: dict[str, Any] = {
                    "queues": [QUEUE],
                    "wait": wait,
                    "concurrency": 1,  # extraction is CPU-bound: one job per process
                    "name": name,
                    "update_heartbeat_interval": HEARTBEAT_S,
                    "stalled_worker_timeout": STALLED_AFTER_S,
                }
                await self.app.run_worker_async(**options)

        asyncio.run(work())

    def open(self) -> FleetQueue:
        """Open the producer side (defer from this process)."""
        self.ensure_schema()
        self.app.open()
        return self

    def close(self) -> None:
        self.app.close()
