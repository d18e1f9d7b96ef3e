"""A queue worker in its own process, for the kill -9 tests (tests/memory/test_queue_kill.py).

    python queue_proc.py sqlite:/path/memory.db MARKER_DIR
    python queue_proc.py postgres:SCHEMA MARKER_DIR      (DSN in EGOMEM_TEST_PG_DSN; the fleet queue)

Extraction is the real rules extractor behind a plumbing mock that makes it slow and says
when it starts (MARKER_DIR/<episode>.extracting), so the test can kill the process in the
middle of a job. With QUEUE_PROC_DIE_IN_COMMIT=<episode id>, the process kills itself
(SIGKILL) inside the transaction that writes that episode's memory, after the memory rows
and before the commit.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from egomem.llm.base import T
from egomem.memory.jobs import MemoryJobs
from egomem.memory.manager import MemoryManager
from egomem.memory.rules_provider import RulesProvider
from egomem.retrieval.encoder import TextEncoder
from egomem.store.base import MemoryStore

SLOW_S = float(os.environ.get("QUEUE_PROC_SLOW_S", "1.0"))


class SlowRulesPlumbingMock(RulesProvider):
    """Plumbing mock: the rules extractor, slowed down, leaving a marker when a session's extraction starts."""

    def __init__(self, markers: Path) -> None:
        super().__init__()
        self.markers = markers

    def run(self, task: str, payload: BaseModel, schema: type[T]) -> T:
        if task == "extract":
            episode = str(getattr(payload, "episode_id", "session"))
            (self.markers / f"{episode}.extracting").touch()
            time.sleep(SLOW_S)
        return super().run(task, payload, schema)


def open_store(spec: str) -> MemoryStore:
    kind, where = spec.split(":", 1)
    if kind == "sqlite":
        from egomem.store.sqlite import SQLiteStore

        return SQLiteStore(where)
    from egomem.store.postgres import PostgresStore

    return PostgresStore(os.environ["EGOMEM_TEST_PG_DSN"], schema=where)


def main() -> None:
    spec, markers = sys.argv[1], Path(sys.argv[2])
    store = open_store(spec)
    manager = MemoryManager(store, SlowRulesPlumbingMock(markers), TextEncoder(), fallback=RulesProvider())
    jobs = MemoryJobs(store, manager)
    die_in = os.environ.get("QUEUE_PROC_DIE_IN_COMMIT", "")
    if die_in:
        finish = store.jobs.finish

        def finish_or_die(key: str, *args: Any, **kw: Any) -> None:
            if key.endswith(f":{die_in}"):
                os.kill(os.getpid(), signal.SIGKILL)  # memory rows written, not committed
            finish(key, *args, **kw)

        store.jobs.finish = finish_or_die  # type: ignore[method-assign]
    (markers / "ready").touch()
    if spec.startswith("postgres:"):
        from egomem.runtime.fleet_queue import FleetQueue

        FleetQueue(jobs, os.environ["EGOMEM_TEST_PG_DSN"], spec.split(":", 1)[1]).run_worker(wait=False)
    else:
        jobs.drain()
    store.close()


if __name__ == "__main__":
    main()
