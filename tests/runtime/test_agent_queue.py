"""The agent's hold on the memory-writing queue (runtime/memory_queue.py AgentQueue): sessions go
through the store's table and the worker thread; it yields only when the stream is not waiting."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from egomem.config import load_config
from egomem.memory.items import SessionText, Turn
from egomem.memory.manager import MemoryManager
from egomem.memory.rules_provider import RulesProvider
from egomem.retrieval.encoder import TextEncoder
from egomem.runtime.memory_queue import AgentQueue
from egomem.store.sqlite import SQLiteStore


@pytest.fixture(scope="module")
def encoder() -> Any:
    return TextEncoder()


def test_sessions_go_through_the_queue_and_the_worker_stops_when_done(tmp_path: Path, encoder: Any) -> None:
    cfg = load_config(data_dir=tmp_path, environ={})
    store = SQLiteStore(tmp_path / "memory.db")
    queue = AgentQueue(cfg, store, MemoryManager(store, RulesProvider(), encoder))
    queue.start()
    try:
        assert queue.worker is not None and queue.worker.alive
        turns = [Turn(speaker="user", text="Hi, I'm Nora."), Turn(speaker="user", text="I live in Lyon.")]
        session = SessionText(episode_id="e1", start=1000.0, end=1060.0, date="1 January 2024", turns=turns)
        out = queue.process(session, None)
        assert out.ok and store.job("local:e1").status == "done"
        assert ("ADD", "lives in Lyon") in [(op, text) for op, _, text in out.applied.ops]  # the outcome, handed back
    finally:
        queue.stop()
        store.close()
    assert queue.worker is None


def test_the_worker_yields_only_when_the_stream_does_not_wait(tmp_path: Path, encoder: Any) -> None:
    cfg = load_config(data_dir=tmp_path, environ={})
    store = SQLiteStore(tmp_path / "memory.db")
    try:
        queue = AgentQueue(cfg, store, MemoryManager(store, RulesProvider(), encoder))
        queue.step(0.0, lockstep=False)
        time.sleep(0.7)  # the stream loop has not moved for 0.7 s: behind
        assert queue.behind()
        queue.step(0.08, lockstep=True)  # a lockstep replay pauses the stream for memory: never yield
        time.sleep(0.7)
        assert not queue.behind()
    finally:
        store.close()
