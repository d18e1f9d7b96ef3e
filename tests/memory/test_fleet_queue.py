"""memory.queue = "fleet": a session handed to memory is stored and deferred to procrastinate, and a
worker (FleetQueue.run_worker, as `egomem worker` runs it) writes it; a second delivery writes nothing."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from egomem.config import load_config
from egomem.memory.items import SessionText, Turn
from egomem.memory.manager import MemoryManager
from egomem.memory.rules_provider import RulesProvider
from egomem.runtime.memory_queue import fleet_queue, memory_jobs

PG_DSN = os.environ.get("EGOMEM_TEST_PG_DSN", "")
pytestmark = [pytest.mark.postgres, pytest.mark.skipif(not PG_DSN, reason="EGOMEM_TEST_PG_DSN is not set")]


@pytest.fixture
def schema() -> Iterator[str]:
    pytest.importorskip("procrastinate")
    name = f"t_{uuid.uuid4().hex[:12]}"
    yield name
    import psycopg
    from psycopg import sql

    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))


def test_fleet_sessions_go_through_procrastinate(schema: str, tmp_path: Path, encoder: Any) -> None:
    from egomem.store.postgres import PostgresStore

    env = {"EGOMEM_MEMORY__QUEUE": "fleet", "EGOMEM_STORE__PROVIDER": "postgres", "EGOMEM_STORE__DSN": PG_DSN}
    cfg = load_config(data_dir=tmp_path, environ={**env, "EGOMEM_STORE__SCHEMA_NAME": schema})
    store = PostgresStore(PG_DSN, schema=schema)
    try:
        manager = MemoryManager(store, RulesProvider(), encoder)
        jobs = memory_jobs(cfg, store, manager, source="robot-1")
        turns = [Turn(speaker="user", text="Hi, I'm Nora."), Turn(speaker="user", text="I live in Lyon.")]
        session = SessionText(episode_id="e1", start=1000.0, end=1060.0, date="1 January 2024", turns=turns)
        out = jobs.process(session)
        assert out.notes == ["queued for a fleet worker"] and store.job("robot-1:e1").status == "pending"
        assert jobs.dispatch is not None
        jobs.dispatch("robot-1:e1")  # deferred again while it waits: once (queueing lock)
        embedded = cfg.model_copy(update={"memory": cfg.memory.model_copy(update={"queue": "embedded"})})
        worker_jobs = memory_jobs(embedded, store, manager, source="robot-1")  # the worker runs, never defers
        fleet_queue(cfg, worker_jobs).run_worker(wait=False)
        assert store.job("robot-1:e1").status == "done"
        [nora] = store.find_users_by_name("Nora")
        assert [f.text for f in store.list_facts(nora.id) if f.kind.value != "summary"] == ["lives in Lyon"]
        rows = store.db.fetch_tuples(sa.text("SELECT task_name, status FROM procrastinate_jobs"))
        extracted = [str(status) for task, status in rows if task == "egomem.extract_session"]
        assert extracted == ["succeeded"]  # deferred twice while waiting: one job
    finally:
        store.close()
