"""PostgreSQL killed with SIGKILL while a memory job writes its session: after the restart (crash
recovery from the WAL) the job is written exactly once, by the same worker thread, which stayed
alive and reconnected, without waiting out the job's lease.

The kill is timed, not raced: the test kills the postmaster from inside the job's own memory
transaction (after its rows, just before the job is marked done), waits until that transaction's
backend has gone, and lets the write go on into the dead connection. The database is started again
2 s later. A private cluster (tests/store/test_postgres_restart.py's `Cluster`), never the shared
server of EGOMEM_TEST_PG_DSN; like the other PostgreSQL tests it runs only when that is set, and it
needs PostgreSQL's binaries and root, as `Cluster` does.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from tests.memory.test_jobs import _session
from tests.store.test_postgres_restart import HAVE_CLUSTER_TOOLS, PG_BIN, Cluster, running_cluster

from egomem.memory.job_worker import JobWorker
from egomem.memory.jobs import MemoryJobs, RetryPolicy
from egomem.memory.manager import MemoryManager
from egomem.memory.rules_provider import RulesProvider
from egomem.store.postgres import PostgresStore

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.slow,  # a private cluster: initdb, a crash and a recovery (about 15 s)
    pytest.mark.skipif(not os.environ.get("EGOMEM_TEST_PG_DSN"), reason="EGOMEM_TEST_PG_DSN is not set"),
    pytest.mark.skipif(not HAVE_CLUSTER_TOOLS, reason=f"no PostgreSQL + pgvector under {PG_BIN} (scripts/postgres.sh)"),
    pytest.mark.skipif(os.geteuid() != 0, reason="starts a private PostgreSQL as user postgres: needs root"),
]
RECOVERY = "database system was not properly shut down; automatic recovery in progress"


def _gone(pid: int, timeout_s: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    yield from running_cluster()


def test_a_memory_job_the_crash_interrupts_is_written_once_after_recovery(cluster: Cluster, encoder: Any) -> None:
    store = PostgresStore(cluster.dsn, schema=f"t_{uuid.uuid4().hex[:12]}")
    manager = MemoryManager(store, RulesProvider(), encoder, fallback=RulesProvider())
    jobs = MemoryJobs(store, manager, RetryPolicy(backoff_s=0.5))  # the real clock: leases stay 900 s
    real_finish = store.jobs.finish
    crashed: list[int] = []  # the backend that died with the transaction
    restarted = threading.Event()

    def start_again() -> None:
        cluster.start_again()
        restarted.set()

    def crash_then_finish(*a: Any, **kw: Any) -> None:
        if not crashed:  # the first attempt: its memory rows are written, its COMMIT not sent
            crashed.append(int(store.db.fetch_tuples(sa.text("SELECT pg_backend_pid()"))[0][0]))
            cluster.kill_postmaster()
            assert _gone(crashed[0]), "the backend outlived its postmaster"
            threading.Timer(2.0, start_again).start()
        real_finish(*a, **kw)

    store.jobs.finish = crash_then_finish  # type: ignore[method-assign,unused-ignore]
    worker = JobWorker(jobs).start()
    try:
        session = _session("e1", "Hi, I'm Nora.", "I work at Acme as an engineer.", "My sister Lina is a doctor.")
        key = jobs.submit(session)
        outcome_settled = jobs.wait(key, timeout_s=120)
        assert outcome_settled is None  # nobody asked `run` for it: the worker thread wrote it
        assert restarted.wait(60) and worker.alive
    finally:
        worker.stop()
    check = PostgresStore(cluster.dsn, schema=store.schema)  # a new connection: what is really stored
    try:
        job = check.job(key)
        assert (job.status, job.attempts) == ("done", 2)  # the attempt the crash cut, then one written
        episodes = check.list_episodes()
        assert [e.id for e in episodes] == ["e1"]
        users = check.list_users()
        facts = [f for u in users for f in check.list_facts(u.id) if f.kind.value != "summary"]
        assert len(users) == 2 and sorted(u.name or "" for u in users) == ["Lina", "Nora"]
        assert facts and max(Counter((f.user_id, f.text) for f in facts).values()) == 1  # no fact twice
        assert all(f.support == 1 for f in facts)  # a second write of the session would confirm them: 2
    finally:
        check.close()
        store.close()
    assert jobs.counts["store_failures"] == jobs.counts["orphans_taken"] == jobs.counts["retries_done"] == 1
    assert jobs.hit == jobs.retried == {key}
    assert RECOVERY in cluster.log_text()
