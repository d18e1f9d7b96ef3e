"""`egomem status` shows the memory-writing queue; `egomem worker --once` takes its jobs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from egomem.memory.items import SessionText, Turn
from egomem.memory.jobs import encode
from egomem.store.sqlite import SQLiteStore


def egomem(*args: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "EGOMEM_LLM__PROVIDER": "rules", "HF_HUB_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "egomem.cli.main", "--data-dir", str(data_dir), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)


def test_status_and_worker(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "memory.db")
    turns = [Turn(speaker="user", text="Hi, I'm Nora."), Turn(speaker="user", text="I live in Lyon.")]
    session = SessionText(episode_id="e1", start=1000.0, end=1060.0, date="1 January 2024", turns=turns)
    store.submit_job("local:e1", "e1", encode(session, None), session_end=1060.0, now=1061.0)
    store.close()
    out = egomem("status", data_dir=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "memory queue: 1 waiting (1 pending, 0 running)" in out.stdout
    run = egomem("worker", "--once", data_dir=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "ran 1 memory job(s)" in run.stderr
    status = json.loads(egomem("status", "--json", data_dir=tmp_path).stdout)["memory_queue"]
    assert (status["backlog"], status["done"], status["failed"], status["lag_window"]) == (0, 1, 0, 1)
    store = SQLiteStore(tmp_path / "memory.db")
    try:
        [nora] = store.find_users_by_name("Nora")
        assert [f.text for f in store.list_facts(nora.id) if f.kind.value != "summary"] == ["lives in Lyon"]
    finally:
        store.close()
