"""When memory management may close a session: never while a user turn that started in it is still
open or being transcribed, and a turn belongs to exactly one session, whole (runtime/agent.py,
`_manage_memory` / `_cover_turns`). Synthetic streams through the agent's own run loop, lockstep.

Plumbing mocks, named as such: `EnergyVAD` (speech = loud samples; the real Silero needs real
speech), `ScheduledTrigger` (sessions where the test says, in stream seconds, as the trained
trigger would tag them), `ScriptedASR` (a fixed line per turn). The turn detector, the memory
rounds, the session logic, the rules extractor and the store are the product's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from egomem.config import Config
from egomem.dialog.template import TemplateResponder
from egomem.memory.manager import MemoryManager
from egomem.memory.rules_provider import RulesProvider
from egomem.memory.trigger.metrics import sessions
from egomem.perception.audio import SAMPLE_RATE
from egomem.perception.vad import WINDOW
from egomem.retrieval.encoder import default_encoder
from egomem.retrieval.process import RetrievalProcess
from egomem.runtime.agent import Components, EgoMem, RunResult
from egomem.runtime.window import AgentStream
from egomem.store.sqlite import SQLiteStore
from egomem.stream.clock import STEP_S
from egomem.stream.sources import Recording, replay

LINE = "My name is Diane and I live in New Jersey."


class EnergyVAD:
    """Plumbing mock of SileroVAD's streaming interface: probability 1 for a loud 32 ms window."""

    def stream(self) -> EnergyVAD:
        self._pending = np.zeros(0, np.float32)
        return self

    def feed(self, audio: np.ndarray) -> np.ndarray:
        a = np.concatenate([self._pending, audio])
        n = a.size // WINDOW
        self._pending = a[n * WINDOW :]
        rms = np.sqrt(np.mean(a[: n * WINDOW].reshape(n, WINDOW) ** 2, axis=1)) if n else np.zeros(0)
        return (rms > 0.01).astype(np.float32)


class ScheduledTrigger:
    """Plumbing mock of the episodic trigger: sessions at fixed stream seconds (start, end)."""

    def __init__(self, spans: list[tuple[float, float]], now: Any) -> None:
        self.spans, self.now = spans, now

    def tag(self, listen16k: np.ndarray, speak16k: np.ndarray, vad: object = None) -> np.ndarray:
        steps = listen16k.size // round(STEP_S * SAMPLE_RATE)
        origin = self.now() - listen16k.size / SAMPLE_RATE  # the window ends now
        labels = np.zeros(steps, np.int64)
        for a, b in self.spans:
            i, j = round((a - origin) / STEP_S), round((b - origin) / STEP_S)
            if j < 0 or i >= steps:
                continue
            labels[max(i, 0) : min(j, steps)] = 2
            if i >= 0:
                labels[i] = 1
            if j < steps:
                labels[j] = 3
        return labels


class ScriptedASR:
    """Plumbing mock: the same line for every turn; records the turns it was asked about."""

    def __init__(self) -> None:
        self.calls = 0

    def transcribe(self, audio: np.ndarray) -> str:
        self.calls += 1
        return LINE


def _agent(store: SQLiteStore, transcriber: ScriptedASR, trigger: list[tuple[float, float]] | None = None) -> EgoMem:
    """The agent over mocked perception (energy VAD, scripted ASR), the trigger scheduled by stream time."""
    spans = trigger
    return agent_over_mocks(
        store, transcriber, lambda stream: None if spans is None else ScheduledTrigger(spans, lambda: stream.now_s)
    )


def agent_over_mocks(
    store: SQLiteStore,
    transcriber: ScriptedASR,
    trigger: Callable[[AgentStream], object],
    llm: RulesProvider | None = None,
    config: Config | None = None,
) -> EgoMem:
    """The agent over mocked perception (energy VAD, `transcriber`), `trigger(stream)` its trigger, the
    rules extractor (or `llm`) and the product's memory, retrieval and store."""
    config = config or Config()
    encoder = default_encoder()
    stream = AgentStream(config.runtime.buffer_s)
    parts = Components(
        store=store,
        retrieval=RetrievalProcess(store, encoder=encoder, config=config.retrieval, clock=stream.clock),
        model=TemplateResponder(),
        transcriber=transcriber,
        trigger=trigger(stream),  # type: ignore[arg-type]
        sessions=sessions,
        manager=MemoryManager(store, llm or RulesProvider(), encoder, config.memory),
        vad=EnergyVAD(),  # type: ignore[arg-type]
    )
    return EgoMem(config, parts, stream=stream)


def _run(
    store: SQLiteStore, speech: list[tuple[float, float]], duration: float, trigger: list[tuple[float, float]]
) -> tuple[list[float], RunResult]:
    rng = np.random.default_rng(0)
    listen = np.zeros(round(duration * SAMPLE_RATE), np.float32)
    for a, b in speech:
        i, j = round(a * SAMPLE_RATE), round(b * SAMPLE_RATE)
        listen[i:j] = (0.1 * rng.standard_normal(j - i)).astype(np.float32)
    agent = _agent(store, ScriptedASR(), trigger)
    closed_at: list[float] = []  # stream time of the memory round that closed each session (one person)
    agent.on_session_handled(lambda done: closed_at.append(agent.now_s))
    agent.on_session_handled(lambda done: HELD.append(done.held_rounds))
    rec = Recording(listen=listen, speak=np.zeros_like(listen), frames=[], duration_s=duration)
    HELD.clear()
    return closed_at, agent.run(replay(rec), lockstep=True)


HELD: list[int] = []  # per session closed by the last _run: the rounds that left it open for a pending turn


def _stored_lines(store: SQLiteStore) -> list[str]:
    return [x for e in store.list_episodes() for x in e.user_transcript.splitlines() if x.strip()]


def test_a_turn_still_open_at_the_end_of_the_stream_is_flushed_into_its_session(store: SQLiteStore) -> None:
    """The phone call: one VAD turn from 1 s to the end (25 s); the trigger ends its session at 5 s.
    The rounds at 10 s and 20 s must not close that session while the turn is open; the end of
    the stream closes the turn, transcribes it, and the session grows to hold it."""
    closed_at, result = _run(store, speech=[(1.0, 25.0)], duration=25.0, trigger=[(1.0, 5.0)])
    assert [o.reason for o in result.outcomes if not o.ok] == []  # no session closed "empty"
    assert len(result.heard) == 1 and result.heard[0][2] == LINE
    assert len(result.sessions) == 1
    start, end, _ = result.sessions[0]
    assert start <= result.heard[0][0] and end >= result.heard[0][1] - STEP_S
    assert _stored_lines(store) == [LINE]
    assert closed_at == [pytest.approx(25.0, abs=0.1)]  # by the final round, after the flush
    # At 10 s the session (ending 5.04 s) is within the 5 s margin: too fresh, not held; at 20 s it is
    # over but its turn is still open: held once (reported with the session).
    assert HELD == [1]


def test_a_turn_over_two_trigger_sessions_is_stored_once_in_one_session(store: SQLiteStore) -> None:
    """A VAD turn (1-14 s) running over two trigger sessions (1-5 s, 8-12 s): one session, the
    transcript stored once, nothing closed before the turn was transcribed."""
    closed_at, result = _run(store, speech=[(1.0, 14.0)], duration=30.0, trigger=[(1.0, 5.0), (8.0, 12.0)])
    assert [o.reason for o in result.outcomes if not o.ok] == []
    assert len(result.sessions) == 1 and _stored_lines(store) == [LINE]
    start, end, _ = result.sessions[0]
    assert start == pytest.approx(1.0, abs=0.1) and end == pytest.approx(14.0, abs=0.2)
    assert closed_at == [pytest.approx(20.0, abs=0.1)]  # the turn was heard at ~14.8 s: the round at 20 s
    assert HELD == [0]  # at 10 s the first span was within the margin; at 20 s the turn was heard


def test_a_turn_after_a_session_does_not_hold_it_back(store: SQLiteStore) -> None:
    """Only a turn that started inside a session defers its close: a session that ended before
    the next person started speaking closes on time (at the 10 s round), with its own turn."""
    closed_at, result = _run(store, speech=[(1.0, 4.0), (8.0, 24.0)], duration=24.0, trigger=[(1.0, 4.5), (8.0, 12.0)])
    assert [o.reason for o in result.outcomes if not o.ok] == []
    assert len(result.sessions) == 2 and _stored_lines(store) == [LINE, LINE]
    assert closed_at == [pytest.approx(10.0, abs=0.1), pytest.approx(24.0, abs=0.1)]
    assert HELD == [0, 1]  # the first closed on time; the second waited at 20 s for its open turn
    first, second = result.sessions
    assert first[1] < 8.0 and second[0] == pytest.approx(8.0, abs=0.1) and second[1] >= 23.5


def test_a_turn_being_transcribed_is_still_pending_speech(store: SQLiteStore) -> None:
    """Without lockstep the memory process runs while the stream thread transcribes: a turn the
    detector has closed counts as pending until its transcript is heard, never as neither."""
    seen: list[tuple[float | None, int]] = []
    agent_box: list[EgoMem] = []

    class WatchingASR(ScriptedASR):
        def transcribe(self, audio: np.ndarray) -> str:
            agent = agent_box[0]
            seen.append((agent.dialog.speech_pending_since(), len(agent.log.heard_turns())))
            return super().transcribe(audio)

    agent = _agent(store, WatchingASR())  # no memory round is reached in 6 s: no trigger needed
    agent_box.append(agent)
    listen = np.zeros(6 * SAMPLE_RATE, np.float32)
    listen[SAMPLE_RATE : 3 * SAMPLE_RATE] = 0.1 * np.random.default_rng(0).standard_normal(2 * SAMPLE_RATE)
    for step in replay(Recording(listen=listen, speak=np.zeros_like(listen), frames=[], duration_s=6.0)):
        agent.feed(step)
    assert len(seen) == 1
    assert seen[0][0] == pytest.approx(1.0, abs=0.05) and seen[0][1] == 0  # pending, not yet heard
    assert agent.dialog.speech_pending_since() is None and len(agent.log.heard_turns()) == 1  # heard, no longer pending
