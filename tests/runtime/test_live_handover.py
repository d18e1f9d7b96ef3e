"""A live (non-lockstep) agent commits each finished session to the memory queue and goes on; the
queue's worker writes the jobs in order, and a session's outcome (timeline "memory" entries, the
observers' `SessionHandled`) follows when its job completes. The end of the stream drains the queue
without yielding to a perception that has stopped (runtime/memory_rounds.py, runtime/memory_queue.py).

Plumbing mocks, named as such: `EnergyVAD` and `ScriptedASR` (tests/runtime/test_session_close.py),
`EnergyTrigger` (a session wherever the microphone is loud: the same answer whenever a round runs, as
a live round may run after the stream has moved on), and `SlowRulesLLMMock` (the rules extractor made
slow, as the local model is: every extraction call waits `delay_s` first). The memory rounds, the queue,
its worker, the rules extractor and the store are the product's.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest
from pydantic import BaseModel
from tests.runtime.test_session_close import LINE, EnergyVAD, ScriptedASR

from egomem.config import Config
from egomem.dialog.template import TemplateResponder
from egomem.llm.base import T
from egomem.memory.manager import MemoryManager
from egomem.memory.rules_provider import RulesProvider
from egomem.memory.trigger.metrics import sessions
from egomem.perception.audio import SAMPLE_RATE
from egomem.retrieval.encoder import default_encoder
from egomem.retrieval.process import RetrievalProcess
from egomem.runtime.agent import Components, EgoMem, SessionHandled
from egomem.runtime.memory_queue import AgentQueue
from egomem.runtime.window import AgentStream
from egomem.store.sqlite import SQLiteStore
from egomem.stream.clock import STEP_S
from egomem.stream.sources import Recording, replay

SPEECH = [(1.0, 4.0), (11.0, 14.0), (21.0, 24.0), (31.0, 34.0)]  # closed by the rounds at 10, 20, 30, 40 s
DURATION = 45.0
DELAY_S = 1.0


class EnergyTrigger:
    """Plumbing mock of the episodic trigger: in session (1 start, 2 inside, 3 end) wherever the 80 ms
    step is loud; depends on the window's audio only."""

    def tag(self, listen16k: np.ndarray, speak16k: np.ndarray, vad: object = None) -> np.ndarray:
        n = round(STEP_S * SAMPLE_RATE)
        steps = listen16k.size // n
        loud = np.sqrt(np.mean(listen16k[: steps * n].reshape(steps, n) ** 2, axis=1)) > 0.01
        labels = np.where(loud, 2, 0).astype(np.int64)
        for i in range(steps):
            if loud[i] and (i == 0 or not loud[i - 1]):
                labels[i] = 1
            if loud[i] and i + 1 < steps and not loud[i + 1]:
                labels[i + 1] = 3
        return labels


class SlowRulesLLMMock(RulesProvider):
    """Plumbing mock: the rules extractor, each call `delay_s` late (a local model's pace, shortened)."""

    def __init__(self, delay_s: float) -> None:
        super().__init__()
        self.delay_s = delay_s
        self.threads: set[str] = set()

    def run(self, task: str, payload: BaseModel, schema: type[T]) -> T:
        self.threads.add(threading.current_thread().name)
        time.sleep(self.delay_s)
        return super().run(task, payload, schema)


def _agent(store: SQLiteStore, llm: RulesProvider, config: Config) -> EgoMem:
    encoder = default_encoder()
    stream = AgentStream(config.runtime.buffer_s)
    parts = Components(
        store=store,
        retrieval=RetrievalProcess(store, encoder=encoder, config=config.retrieval, clock=stream.clock),
        model=TemplateResponder(),
        transcriber=ScriptedASR(),  # type: ignore[arg-type]
        trigger=EnergyTrigger(),
        sessions=sessions,
        manager=MemoryManager(store, llm, encoder, config.memory),
        vad=EnergyVAD(),  # type: ignore[arg-type]
    )
    return EgoMem(config, parts, stream=stream)


def _recording() -> Recording:
    rng = np.random.default_rng(0)
    listen = np.zeros(round(DURATION * SAMPLE_RATE), np.float32)
    for a, b in SPEECH:
        i, j = round(a * SAMPLE_RATE), round(b * SAMPLE_RATE)
        listen[i:j] = (0.1 * rng.standard_normal(j - i)).astype(np.float32)
    return Recording(listen=listen, speak=np.zeros_like(listen), frames=[], duration_s=DURATION)


def test_a_live_run_enqueues_sessions_without_waiting_and_writes_each_once_after_stop(store: SQLiteStore) -> None:
    llm = SlowRulesLLMMock(DELAY_S)
    agent = _agent(store, llm, Config())
    handled: list[SessionHandled] = []
    agent.on_session_handled(handled.append)
    agent.start()
    for step in replay(_recording()):  # as fast as the machine goes, not waiting for memory
        agent.advance(step, lockstep=False)
    # The rounds for 10..40 s ran (or run now) without waiting for extraction: every session is
    # committed while the slow extractor has written at most a few of them.
    deadline = time.monotonic() + 10.0
    while len(store.list_jobs()) < len(SPEECH) - 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    committed = store.list_jobs()
    assert len(committed) >= len(SPEECH) - 1  # the last closes with the final round, at stop
    assert sum(j.status != "done" for j in committed) >= 2  # waiting in the queue, not in memory rounds
    t_stop = time.perf_counter()
    agent.stop()
    stop_s = time.perf_counter() - t_stop
    result = agent.result(0.0)

    jobs = store.list_jobs()
    assert len(jobs) == len(SPEECH) and all(j.status == "done" and j.attempts == 1 for j in jobs)
    # Committed before extraction: the sessions were all queued before the second one was written.
    done = sorted(j.done_at or 0.0 for j in jobs)
    assert max(j.enqueued_at for j in jobs[:-1]) < done[1]
    assert [j.session_end for j in jobs] == sorted(j.session_end for j in jobs)  # written in order
    assert sorted(j.done_at or 0.0 for j in jobs) == [j.done_at for j in jobs]
    lines = [x for e in store.list_episodes() for x in e.user_transcript.splitlines() if x.strip()]
    assert lines == [LINE] * len(SPEECH)  # each session written exactly once
    # Outcomes follow completion: one per session, its ADDs on the timeline at the session's end.
    assert len(result.outcomes) == len(SPEECH) and all(o.ok for o in result.outcomes)
    assert len(handled) == len(SPEECH) and all(h.wall_s >= DELAY_S for h in handled)
    assert max(h.queued_s for h in handled) > max(h.wall_s for h in handled)  # some waited their turn
    ends = {round(e, 1) for _, e, _ in result.sessions}
    adds = [e for e in agent.timeline.of_type("memory") if e.fields["op"] == "ADD"]
    assert {round(e.time, 1) for e in adds} == ends and len(ends) == len(SPEECH)
    assert llm.threads == {"egomem-memory-jobs"}  # extraction ran in the queue's worker only
    # The drain: everything written, no yielding to the stopped stream (the worker's 30 s stretch).
    assert result.memory_drain is not None and result.memory_drain.complete
    assert stop_s < 15.0
    stats = agent.memory_queue()
    assert stats is not None and stats.backlog == 0 and stats.done == len(SPEECH)


def test_a_lockstep_run_waits_for_each_session(store: SQLiteStore) -> None:
    """Lockstep stays deterministic: each round waits for its sessions to be written."""
    agent = _agent(store, SlowRulesLLMMock(0.2), Config())
    written_at: list[float] = []  # stream time when each session was written
    agent.on_session_handled(lambda _: written_at.append(agent.now_s))
    result = agent.run(replay(_recording()), lockstep=True)
    assert written_at == [pytest.approx(t, abs=0.1) for t in (10.0, 20.0, 30.0, 40.0)]
    assert len(result.outcomes) == len(SPEECH) and result.memory_drain is not None
    assert result.memory_drain.complete and result.memory_drain.left == 0


def test_the_drain_is_bounded_and_reports_what_it_left(tmp_path: Path) -> None:
    """A drain that runs out of time stops after the job in hand; the rest stays committed in the store."""
    store = SQLiteStore(tmp_path / "memory.db")
    try:
        agent = _agent(store, SlowRulesLLMMock(DELAY_S), Config())
        agent.start()
        for step in replay(_recording()):
            agent.advance(step, lockstep=False)
        agent.stop(drain_timeout_s=0.5)
        drain = agent.result(0.0).memory_drain
        assert drain is not None and not drain.complete and drain.timeout_s == 0.5
        assert drain.left == sum(j.status != "done" for j in store.list_jobs()) > 0
        assert len(store.list_jobs()) == len(SPEECH)  # committed all the same
    finally:
        store.close()


def test_after_the_end_of_the_stream_the_worker_never_yields(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "memory.db")
    try:
        queue = AgentQueue(Config(), store, MemoryManager(store, RulesProvider(), default_encoder()))
        queue.step(0.0, lockstep=False)
        time.sleep(0.7)  # the stream loop has not moved for 0.7 s: behind
        assert queue.behind()
        queue.end_of_stream()  # the stream stopped: nothing is behind, drain
        assert not queue.behind()
    finally:
        store.close()
