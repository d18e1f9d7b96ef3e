"""A database that stops answering mid-job (memory/jobs.py): the attempt whose write died with the
connection is retried to completion once the store answers, written exactly once, without waiting
out the lease; a caller handing a session over waits the outage out instead of failing the round.

The outage is plumbing: the store's job operations raise StoreUnreachable (what store/db.py raises
for a lost connection) for as long as the test says. The real database killed with SIGKILL is
tests/memory/test_queue_pg_crash.py."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from tests.memory.test_jobs import Clock, _facts, _session

from egomem.errors import StoreUnreachable
from egomem.memory.jobs import MemoryJobs, RetryPolicy, worker_id
from egomem.memory.manager import MemoryManager
from egomem.memory.rules_provider import RulesProvider
from egomem.store.sqlite import SQLiteStore

LOST = "lost the connection to the store (plumbing: an outage)"


def _jobs(store: SQLiteStore, encoder: Any, **policy: Any) -> MemoryJobs:
    manager = MemoryManager(store, RulesProvider(), encoder, fallback=RulesProvider())
    return MemoryJobs(store, manager, RetryPolicy(**policy), clock=Clock())


class Outage:
    """Plumbing: while `down`, the named operations of `store.jobs` raise StoreUnreachable."""

    def __init__(self, store: SQLiteStore, *names: str) -> None:
        self.down = False
        self.hits = 0
        for name in names:
            real = getattr(store.jobs, name)
            setattr(store.jobs, name, self._guard(real))

    def _guard(self, real: Any) -> Any:
        def call(*a: Any, **kw: Any) -> Any:
            if self.down:
                self.hits += 1
                raise StoreUnreachable(LOST)
            return real(*a, **kw)

        return call


def test_a_job_whose_write_died_with_the_connection_is_retried_once_the_store_answers(
    store: SQLiteStore, encoder: Any
) -> None:
    jobs = _jobs(store, encoder)
    key = jobs.submit(_session("e1", "Hi, I'm Nora.", "I work at Acme as an engineer."))
    outage = Outage(store, "finish", "retry_later")
    outage.down = True  # the write's last step and the give-back both meet the dead connection
    result = jobs.run_next()
    assert result is not None and result.status == "retry" and LOST in result.error
    held = store.job(key)
    assert (held.status, held.claimed_by, held.attempts) == ("running", worker_id(), 1)  # an orphan
    assert store.list_episodes() == [] and _facts(store) == []  # the failed attempt wrote nothing
    outage.down = False
    again = jobs.run_next()  # at once: no lease (900 s) to wait out, as no thread here runs it
    assert again is not None and again.status == "done"
    job = store.job(key)
    assert (job.status, job.attempts) == ("done", 2)
    assert len(store.list_episodes()) == 1 and _facts(store) == ["works as an engineer", "works at Acme"]
    assert jobs.run_next() is None
    assert jobs.counts == {
        "store_failures": 1,
        "store_refusals": 0,
        "store_waits": 0,
        "orphans_taken": 1,
        "retries_run": 1,
        "retries_done": 1,
    }
    assert jobs.hit == jobs.retried == {key}


def test_another_thread_of_the_process_takes_an_orphan_back_but_never_a_job_being_run(
    store: SQLiteStore, encoder: Any
) -> None:
    jobs = _jobs(store, encoder)
    key = jobs.submit(_session("e1", "I live in Lyon."))
    outage = Outage(store, "finish", "retry_later")
    outage.down = True
    assert jobs.run_next() is not None and store.job(key).status == "running"
    outage.down = False
    results: list[Any] = []
    other = threading.Thread(target=lambda: results.append(jobs.run_next()))
    other.start()
    other.join()
    assert results[0] is not None and results[0].status == "done" and store.job(key).attempts == 2

    # A claim by a thread that is running its job now is not an orphan: nobody else takes it.
    key2 = jobs.submit(_session("e2", "I work at Acme."))
    inside: list[Any] = []
    real_process = jobs.manager.process

    def process_while_another_claims(*a: Any, **kw: Any) -> Any:
        probe = threading.Thread(target=lambda: inside.append(jobs.run_next(key=key2)))
        probe.start()
        probe.join()
        return real_process(*a, **kw)

    jobs.manager.process = process_while_another_claims  # type: ignore[method-assign]
    done = jobs.run_next(key=key2)
    assert inside == [None] and done is not None and done.status == "done"
    assert store.job(key2).attempts == 1 and len(store.list_episodes()) == 2


def test_handing_over_waits_out_an_outage_instead_of_failing_the_round(store: SQLiteStore, encoder: Any) -> None:
    jobs = _jobs(store, encoder)
    outage = Outage(store, "submit", "get")
    outage.down = True
    timer = threading.Timer(0.8, lambda: setattr(outage, "down", False))  # the database is back 0.8 s later
    timer.start()
    try:
        out = jobs.process(_session("e1", "Hi, I'm Nora.", "I work at Acme as an engineer."))
    finally:
        timer.cancel()
    assert outage.hits >= 2 and out.ok and out.user_id is not None  # written by this call once the store answered
    assert store.job("local:e1").status == "done" and len(store.list_episodes()) == 1
    assert jobs.counts["store_waits"] == 1 and jobs.hit == jobs.retried == {"local:e1"}


def test_an_outage_longer_than_store_wait_s_is_raised_when_nothing_was_stored(store: SQLiteStore, encoder: Any) -> None:
    jobs = _jobs(store, encoder, store_wait_s=0.3)
    outage = Outage(store, "submit", "get")
    outage.down = True
    with pytest.raises(StoreUnreachable):  # the memory round keeps the session and hands it over again
        jobs.process(_session("e1", "I live in Lyon."))
    outage.down = False
    assert store.list_jobs() == []


def test_a_live_round_enqueuing_during_an_outage_waits_it_out_and_its_session_is_written(
    store: SQLiteStore, encoder: Any
) -> None:
    from egomem.config import Config
    from egomem.runtime.memory_queue import AgentQueue

    manager = MemoryManager(store, RulesProvider(), encoder, fallback=RulesProvider())
    agent_queue = AgentQueue(Config(), store, manager)
    outage = Outage(store, "submit", "get")
    written: list[Any] = []
    agent_queue.start()
    try:
        outage.down = True
        timer = threading.Timer(0.8, lambda: setattr(outage, "down", False))
        timer.start()
        key = agent_queue.enqueue(_session("e1", "I work at Acme."), None, lambda out, _: written.append(out))
        assert not outage.down and outage.hits >= 2  # it returned once the store answered
    finally:
        agent_queue.stop(timeout_s=60)
    assert [o.ok for o in written] == [True] and store.job(key).status == "done"
    assert len(store.list_episodes()) == 1 and agent_queue.jobs.hit == {key}
