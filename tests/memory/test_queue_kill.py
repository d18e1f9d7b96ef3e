"""kill -9 a queue worker mid-job, start another, and every session is written exactly once:
on SQLite (the embedded queue) and on PostgreSQL (the fleet queue, procrastinate).

The worker runs in a subprocess (queue_proc.py: the real rules extractor behind a plumbing
mock that makes it slow). Two deaths: one inside the transaction that writes a session's
memory (after its rows, before the commit), one in the middle of another's extraction.
Then a clean worker drains the queue, and a table scan finds each session once: one
episode each, every fact and relation supported by exactly one evidence row, no fact twice.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from egomem.memory.jobs import MemoryJobs
from egomem.memory.manager import MemoryManager
from egomem.memory.rules_provider import RulesProvider
from egomem.store.base import MemoryStore

HERE = Path(__file__).resolve().parent
SRC = HERE.parents[1] / "src"
PG_DSN = os.environ.get("EGOMEM_TEST_PG_DSN", "")
T0 = 1_700_000_000.0
PEOPLE = [
    ("e1", "Hi, I'm Nora.", "I work at Acme as an engineer."),
    ("e2", "Hello, my name is Omar.", "I live in Lyon.", "My sister Lina is a doctor."),
    ("e3", "I'm Priya.", "I play golf on weekends."),
    ("e4", "Hi, I'm Quinn.", "I work as a chef."),
    ("e5", "My name is Rosa.", "I live in Porto."),
]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def spec(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:{tmp_path / 'memory.db'}"
        return
    if not PG_DSN:
        pytest.skip("EGOMEM_TEST_PG_DSN is not set (bash scripts/postgres.sh prints one)")
    pytest.importorskip("procrastinate")
    schema = f"t_{uuid.uuid4().hex[:12]}"
    yield f"postgres:{schema}"
    import psycopg
    from psycopg import sql

    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def _open(spec: str) -> MemoryStore:
    kind, where = spec.split(":", 1)
    if kind == "sqlite":
        from egomem.store.sqlite import SQLiteStore

        return SQLiteStore(where)
    from egomem.store.postgres import PostgresStore

    return PostgresStore(PG_DSN, schema=where)


def _worker(spec: str, markers: Path, **env: str) -> subprocess.Popen[bytes]:
    environ = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}", **env}
    return subprocess.Popen([sys.executable, str(HERE / "queue_proc.py"), spec, str(markers)], env=environ)


def _wait_for(path: Path, proc: subprocess.Popen[bytes], timeout_s: float = 180.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        assert proc.poll() is None, f"the worker exited ({proc.returncode}) before {path.name}"
        assert time.monotonic() < deadline, f"no {path.name} after {timeout_s} s"
        time.sleep(0.05)


def _submit_all(spec: str, store: MemoryStore, encoder: Any) -> list[str]:
    from egomem.memory.items import SessionText, Turn

    jobs = MemoryJobs(store, MemoryManager(store, RulesProvider(), encoder))
    keys = []
    for i, (ep, *said) in enumerate(PEOPLE):
        turns = [Turn(speaker="user", text=s) for s in said]
        at = T0 + 3600 * i
        session = SessionText(episode_id=ep, start=at, end=at + 60, date="14 November 2023", turns=turns)
        keys.append(jobs.submit(session))
    if spec.startswith("postgres:"):
        from egomem.runtime.fleet_queue import FleetQueue

        fleet = FleetQueue(jobs, PG_DSN, spec.split(":", 1)[1]).open()
        try:
            for key in keys:
                fleet.defer(key)
        finally:
            fleet.close()
    return keys


def test_kill_9_mid_job_loses_nothing_and_writes_nothing_twice(spec: str, tmp_path: Path, encoder: Any) -> None:
    store = _open(spec)
    try:
        keys = _submit_all(spec, store, encoder)
        # 1. dies inside e2's memory transaction (e1 is done by then: jobs run in order)
        (tmp_path / "m1").mkdir()
        first = _worker(spec, tmp_path / "m1", QUEUE_PROC_DIE_IN_COMMIT="e2", QUEUE_PROC_SLOW_S="0")
        assert first.wait(timeout=300) == -signal.SIGKILL
        assert store.job("local:e1").status == "done"
        assert store.job("local:e2").status == "running"  # held by the dead process
        assert "e2" not in {e.id for e in store.list_episodes()}  # its memory rolled back with it
        # 2. killed from outside in the middle of the next extraction (slow: 20 s, so it is mid-job)
        (tmp_path / "m2").mkdir()
        second = _worker(spec, tmp_path / "m2", QUEUE_PROC_SLOW_S="20")
        _wait_for(tmp_path / "m2" / "e2.extracting", second)
        second.send_signal(signal.SIGKILL)
        assert second.wait(timeout=60) == -signal.SIGKILL
        assert store.job("local:e2").status == "running" and store.job("local:e2").attempts == 2
        # 3. a clean worker resumes: everything done, once
        (tmp_path / "m3").mkdir()
        third = _worker(spec, tmp_path / "m3", QUEUE_PROC_SLOW_S="0")
        assert third.wait(timeout=600) == 0
        jobs = {j.key: j for j in store.list_jobs()}
        assert sorted(jobs) == sorted(keys) and {j.status for j in jobs.values()} == {"done"}
        assert jobs["local:e2"].attempts == 3 and jobs["local:e1"].attempts == 1
        _assert_each_session_written_once(store)
    finally:
        store.close()


def _assert_each_session_written_once(store: MemoryStore) -> None:
    episodes = Counter(row[store.columns("episodes").index("id")] for row in store.dump_table("episodes"))
    assert sorted(episodes) == [ep for ep, *_ in PEOPLE] and set(episodes.values()) == {1}
    assert all(e.status == "done" for e in store.list_episodes())
    names = sorted(u.name or "" for u in store.list_users(include_placeholders=False))
    assert names == ["Nora", "Omar", "Priya", "Quinn", "Rosa"]  # one person per session, none twice
    fact_cols = store.columns("facts")
    facts = store.dump_table("facts")
    assert facts, "no facts written"
    per_user = Counter((r[fact_cols.index("user_id")], r[fact_cols.index("text")]) for r in facts)
    assert set(per_user.values()) == {1}, f"a fact written twice: {per_user.most_common(1)}"
    assert {r[fact_cols.index("support")] for r in facts} == {1}
    ev_cols = store.columns("evidence")
    evidence = store.dump_table("evidence")
    items = Counter(r[ev_cols.index("fact_id")] or r[ev_cols.index("relation_id")] for r in evidence)
    assert set(items.values()) == {1}, "an item confirmed by a second run of its session"
    rel_cols = store.columns("relations")
    relations = store.dump_table("relations")
    assert [r[rel_cols.index("relation")] for r in relations] == ["sister"]
