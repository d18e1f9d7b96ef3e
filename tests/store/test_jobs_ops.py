"""store.jobs on each backend: idempotent submit, claims that never hand one job to two workers
(several connections claiming at once), backoff, leases, and a finish that refuses a lost claim."""

from __future__ import annotations

import threading

import pytest

from egomem.errors import StoreError
from egomem.store.base import MemoryStore

from .conftest import StoreFactory


def test_concurrent_claims_hand_each_job_to_one_worker(store_factory: StoreFactory) -> None:
    store = store_factory()
    keys = [f"dev:e{i:02d}" for i in range(24)]
    for key in keys:
        assert store.submit_job(key, key.split(":")[1], "{}", session_end=10.0, now=10.0)
    assert not store.submit_job(keys[0], "e00", "{}", session_end=10.0, now=10.0)  # idempotent
    workers = [store_factory() for _ in range(4)]
    claimed: dict[str, list[str]] = {f"w{i}": [] for i in range(4)}

    def work(name: str, s: MemoryStore) -> None:
        while (job := s.jobs.claim(name, 20.0, lease_s=900.0)) is not None:
            claimed[name].append(job.key)
            with s.transaction():
                s.jobs.finish(job.key, name, outcome="done", now=21.0)

    threads = [threading.Thread(target=work, args=(f"w{i}", s)) for i, s in enumerate(workers)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    every = [k for ks in claimed.values() for k in ks]
    assert sorted(every) == keys  # each job once, none lost
    assert {j.status for j in store.list_jobs()} == {"done"}
    stats = store.job_stats(30.0)
    assert (stats.backlog, stats.done, stats.lag_p50_s, stats.lag_p95_s) == (0, 24, 11.0, 11.0)


def test_backoff_lease_and_a_lost_claim(store: MemoryStore) -> None:
    store.submit_job("dev:e1", "e1", "{}", session_end=0.0, now=0.0)
    job = store.claim_job("a", 1.0, lease_s=100.0)
    assert job is not None and (job.status, job.attempts, job.claimed_by) == ("running", 1, "a")
    assert store.claim_job("b", 50.0, lease_s=100.0) is None  # held, lease running
    store.retry_job_later("dev:e1", "a", error="endpoint timeout", not_before=30.0)
    assert store.claim_job("b", 29.0, lease_s=100.0) is None  # in its backoff
    assert store.job_stats(29.0).retrying == 1
    again = store.claim_job("b", 30.0, lease_s=100.0)
    assert again is not None and again.attempts == 2 and again.last_error == "endpoint timeout"
    # b stalls past its lease: c takes the job, and b's late result is refused (it would be a second write)
    taken = store.claim_job("c", 200.0, lease_s=100.0)
    assert taken is not None and taken.claimed_by == "c" and taken.attempts == 3
    with pytest.raises(StoreError, match="no longer held by b"):
        store.finish_job("dev:e1", "b", outcome="done", now=201.0)
    store.finish_job("dev:e1", "c", outcome="done:fallback(endpoint timeout)", fallback="endpoint timeout", now=202.0)
    done = store.job("dev:e1")
    assert (done.status, done.fallback, done.payload, done.done_at) == ("done", "endpoint timeout", "", 202.0)
    assert store.job_stats(300.0).fallbacks == 1
