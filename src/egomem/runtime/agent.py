"""EgoMem: the three processes over one stream, and the scheduler that drives them.

- **dialog** (`DialogLoop`) runs in the stream loop itself: finished user turns are
  transcribed, attributed and answered; the model's `<retr>` queries are served before its
  next token (`dialog_step`).
- **retrieval** (`IdentityPoller`) polls identity in its own worker thread, every
  `poll_interval_s` of stream time; a poll is skipped, never queued, while one is running.
- **memory management** (`MemoryRounds`) runs in its own worker thread every
  `memory_interval_s`: finished sessions are cut, assembled and handed to memory.

They share one `ConversationLog` (heard, said, present when) and one `AgentStream` (buffer
and clock). Threads, not processes: the heavy parts (dlib, onnxruntime, torch, pocketsphinx)
release the GIL while they compute, and threads share the store, the models and the stream
buffer without copying. With `lockstep=True` (files processed as fast as possible) the loop
waits for each poll and each memory round, so results do not depend on machine speed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

from egomem.config import Config
from egomem.dialog.base import DuplexModel
from egomem.dialog.speech import Synthesizer, ToneSynthesizer
from egomem.dialog.turns import TurnDetector
from egomem.errors import EgomemError
from egomem.identity.consent_gate import ConsentGate
from egomem.identity.types import Identification
from egomem.memory.items import SessionText
from egomem.memory.manager import MemoryManager, SessionOutcome
from egomem.perception.asr import Transcriber
from egomem.perception.audio import SAMPLE_RATE
from egomem.perception.vad import SileroVAD
from egomem.retrieval.process import RetrievalProcess
from egomem.runtime.conversation_log import UNKNOWN_VOICE, ConversationLog
from egomem.runtime.dialog_loop import DialogLoop, ProcessTimes, SpeakingChannel, Voices
from egomem.runtime.identity_poller import IdentityPoller
from egomem.runtime.memory_queue import DRAIN_TIMEOUT_S, AgentQueue, Drained
from egomem.runtime.memory_rounds import MemoryRounds, SessionHandled, Trigger
from egomem.runtime.names import NameLearner
from egomem.runtime.privacy_turns import PrivacyTurns
from egomem.runtime.timeline import Timeline
from egomem.runtime.unsure import UnsureMemory
from egomem.runtime.window import AgentStream
from egomem.store.base import MemoryStore, QueueStats
from egomem.stream.clock import STEP_S
from egomem.stream.sources import Step

__all__ = ["UNKNOWN_VOICE", "Components", "EgoMem", "ProcessTimes", "RunResult", "SessionHandled", "Trigger"]


@dataclass
class Components:
    """What an agent runs with (`runtime.build.build_agent` makes them from a `Services`)."""

    store: MemoryStore
    retrieval: RetrievalProcess  # built with the agent stream's window and clock
    model: DuplexModel
    transcriber: Transcriber
    trigger: Trigger
    sessions: Callable[[np.ndarray], list[tuple[int, int]]]
    manager: MemoryManager
    vad: SileroVAD
    # Key refresh after a confirmed match (the identity layer's `learn`); None: keys stay as enrolled.
    learn: Callable[[Identification], object] | None = None
    # The assistant's voice on the speaking channel (egomem.dialog.speech); None: the tone envelope.
    voice: Synthesizer | None = None
    voices: Voices = field(default_factory=Voices)  # turns told apart by voice (off by default)
    # privacy hook: consent question, "forget me", who stays out of memory (runtime/privacy_turns.py).
    # None: no consent policy in force (as `implicit` without the forget-me turns).
    privacy: PrivacyTurns | None = None
    # The model's passes over written sessions (memory.model_pass = "after") run in this agent; False:
    # a worker that outlives it runs them (the server's, per tenant), and stopping waits for first writes only.
    refine_here: bool = True


@dataclass
class RunResult:
    duration_s: float
    wall_s: float
    times: ProcessTimes
    outcomes: list[SessionOutcome] = field(default_factory=list)
    sessions: list[tuple[float, float, str | None]] = field(default_factory=list)
    # The transcribed user turns: (start, end, text, person by voice; None = the session's user,
    # UNKNOWN_VOICE = nobody's), for a caller that scores who was heard saying what.
    heard: list[tuple[float, float, str, str | None]] = field(default_factory=list)
    # The end-of-stream drain of the memory queue (how long, how many sessions it left); None: no queue.
    memory_drain: Drained | None = None
    # What store failures cost memory: rounds failed / recovered, job attempts that died with the
    # store, callers that waited it out, jobs run again and written (MemoryRounds.failure_counts).
    memory_failures: dict[str, Any] = field(default_factory=dict)


class EgoMem:
    def __init__(
        self, config: Config, parts: Components, timeline: Timeline | None = None, stream: AgentStream | None = None
    ) -> None:
        rt, poll_s = config.runtime, config.retrieval.poll_interval_s
        self.poll_interval_s, self.memory_interval_s = poll_s, rt.memory_interval_s
        self.timeline = timeline or Timeline()
        self.stream = stream or AgentStream(rt.buffer_s)
        self.times = ProcessTimes()
        self.log = ConversationLog()
        self.speaking = SpeakingChannel(parts.voice or ToneSynthesizer())
        self._recording: list[tuple[np.ndarray, np.ndarray]] | None = None  # (listen, speak) per step
        self._model, self._retrieval, self._privacy = parts.model, parts.retrieval, parts.privacy
        gate = parts.privacy.gate if parts.privacy is not None else None
        self.unsure = UnsureMemory(
            gate, parts.store, parts.retrieval, self.timeline, hold_s=config.identity.unsure_hold_s, log=self.log
        )
        names = NameLearner(
            parts.store, parts.manager, parts.retrieval, self.timeline, self.log, poll_interval_s=poll_s,
            unsure=self.unsure,
        )  # fmt: skip
        # The turn detector's VAD history also feeds the trigger (one Silero pass, not two).
        turns = TurnDetector(parts.vad, history_s=rt.buffer_s + 2 * rt.memory_interval_s)
        self.dialog = DialogLoop(
            model=parts.model, retrieval=parts.retrieval, transcriber=parts.transcriber, turns=turns,
            voices=parts.voices, log=self.log, names=names, speaking=self.speaking, buffer=self.stream.buffer,
            timeline=self.timeline, times=self.times, privacy=parts.privacy,
        )  # fmt: skip
        self.identity = IdentityPoller(
            parts.retrieval, self.log, names, self.timeline, self.times, learn=parts.learn, privacy=parts.privacy,
            unsure=self.unsure,
        )  # fmt: skip
        self.memory = MemoryRounds(
            config=rt, poll_interval_s=poll_s, stream=self.stream, log=self.log, trigger=parts.trigger,
            sessions=parts.sessions, vad_since=turns.vad_since, speech_pending_since=self.dialog.speech_pending_since,
            manager=parts.manager, retrieval=parts.retrieval, names=names, timeline=self.timeline, times=self.times,
            privacy=parts.privacy, unsure=self.unsure,
            jobs=AgentQueue(config, parts.store, parts.manager, refine=parts.refine_here),
        )  # fmt: skip
        self._next_poll, self._next_mem = poll_s, rt.memory_interval_s
        self.drained: Drained | None = None  # the memory queue's end-of-stream drain, once stopped

    @property
    def now_s(self) -> float:
        return self.stream.now_s

    @property
    def wall_origin(self) -> float:
        return self.stream.wall_origin

    # -- lifecycle ----------------------------------------------------------------------
    def start(self) -> None:
        self.identity.start()
        self.memory.start()

    def stop(self, *, drain_timeout_s: float | None = DRAIN_TIMEOUT_S) -> None:
        """End of stream: close the open turn and session, finish pending memory work (the queued
        sessions written, waiting at most `drain_timeout_s`; what is left stays in the store)."""
        t = self.stream.now_s
        self.memory.end_of_stream()  # from now on memory jobs run without yielding to perception
        # The turn still open at the end is transcribed before the final memory round is queued:
        # that round then sees its transcript, and no session overlapping it closes without it.
        self.dialog.flush()
        self.identity.close()
        self.memory.close(t)
        self.identity.join()
        self.drained = self.memory.join(drain_timeout_s)

    def run(
        self, steps: Iterator[Step], *, lockstep: bool = True, drain_timeout_s: float | None = DRAIN_TIMEOUT_S
    ) -> RunResult:
        """Feed a whole stream through the agent; returns when memory is written (see `stop`)."""
        wall0 = time.perf_counter()
        self.start()
        try:
            for step in steps:
                self.advance(step, lockstep=lockstep)
        finally:
            self.stop(drain_timeout_s=drain_timeout_s)
        return self.result(time.perf_counter() - wall0)

    def advance(self, step: Step, *, lockstep: bool) -> None:
        """One 80 ms step: ingest and dialog now; identity polls and memory rounds when due."""
        self.memory.step(step.t, lockstep=lockstep)
        self.feed(step)
        t = step.t + STEP_S
        if t >= self._next_poll:
            self._next_poll += self.poll_interval_s
            self.identity.request(t, wait=lockstep)
        if t >= self._next_mem:
            self._next_mem += self.memory_interval_s
            self.memory.request(t, wait=lockstep)

    def feed(self, step: Step) -> None:
        t0 = time.perf_counter()
        buffer = self.stream.buffer
        buffer.listen.append(step.listen)
        speak = self.speaking.mix(step.speak)
        buffer.speak.append(speak)
        if self._recording is not None:
            self._recording.append((step.listen, speak))
        for fr in step.frames:
            buffer.video.append(fr)
        self.times.ingest += time.perf_counter() - t0
        t0 = time.perf_counter()
        self._model.on_step(step)
        self.times.dialog += time.perf_counter() - t0
        self.dialog.hear(step.listen)

    def result(self, wall_s: float) -> RunResult:
        heard = [(h.start, h.end, h.text, h.speaker) for h in self.log.heard_turns()]
        outcomes, sessions = list(self.memory.outcomes), list(self.memory.finished)
        failures = self.memory.failure_counts()
        return RunResult(self.stream.now_s, wall_s, self.times, outcomes, sessions, heard, self.drained, failures)

    # -- what callers outside the runtime may do -------------------------------------------
    def assistant_said(self, text: str, t: float | None = None, *, has_audio: bool = False) -> None:
        """Record a line the assistant said (by our model, or by a remote one over the network)."""
        self.dialog.assistant_said(text, t, has_audio=has_audio)

    def monologue(self, text: str) -> None:
        """A remote model's monologue text: its `<retr>` queries are served (chunks to the model)."""
        self.dialog.step([text])

    def reply(self, text: str, t: float, user_id: str | None) -> str:
        """The model's answer to a user turn given as text (see `DialogLoop.reply`)."""
        return self.dialog.reply(text, t, user_id)

    def identified(self, identification: Identification, at: float) -> None:
        """Identity decided outside the stream (a transcript with known speakers)."""
        self.unsure.observed(identification)
        self._retrieval.observe(identification, at=at)

    def current_user(self) -> str | None:
        return self._retrieval.current_user()

    def remember(self, session: SessionText, identification: Identification | None) -> SessionOutcome:
        """A session assembled outside the stream, to memory the way the memory rounds hand theirs."""
        return self.memory.hand_over(session, identification)

    def remember_visit(self, session: SessionText, person: str | None, at: float) -> SessionOutcome:
        """A session of `person` (a Level-1 id, as `current_user` gave it), ended at stream time `at`,
        to memory as the memory rounds hand one over: a person identity is unsure about goes as UNSURE
        (held unless the candidate's name settles it; a name said settles who they are), and held
        sessions of people settled meanwhile are handed over again (runtime/unsure.py)."""
        ident = self.unsure.identification(person)
        outcome = self.memory.hand_over(session, ident)
        self.unsure.after(person, ident, outcome, at)
        self.memory.settle_held(at)
        return outcome

    def end_of_visits(self, at: float) -> None:
        """No more sessions (a transcript's day is over): held sessions of people settled are written,
        the rest dropped, as at the end of a stream."""
        self.memory.settle_held(at, final=True)

    def memory_queue(self) -> QueueStats | None:
        """The memory-writing queue now: backlog (sessions committed, not yet written) and lag (session
        end -> memory committed, p50/p95, wall clock); None when the agent has no queue."""
        return None if self.memory.jobs is None else self.memory.jobs.jobs.stats()

    def perception_behind(self) -> bool:
        """Whether the stream loop runs late, by the memory queue's measure (never in a lockstep replay,
        never without a queue): work that may wait (the model's passes) yields while it is."""
        return self.memory.jobs is not None and self.memory.jobs.behind()

    def visitor_keys(self) -> ConsentGate | None:
        """The in-memory keys of people not (yet) remembered, which retention drops at the day's end."""
        return None if self._privacy is None else self._privacy.gate

    def on_session_handled(self, callback: Callable[[SessionHandled], None]) -> None:
        """Instrumentation: `callback` is told each session handed to memory once it is written, timed
        (live: from the queue's worker thread, when its job completes)."""
        self.memory.observe(callback)

    def record(self) -> None:
        """Keep both channels (microphone, assistant) from now on, for `write_recording`."""
        self._recording = []

    def write_recording(self, path: str | Path) -> Path:
        """Write the conversation as a 16 kHz stereo WAV: left the microphone (the user), right
        the assistant's voice, including speech still pending when the stream ended."""
        if self._recording is None:
            raise EgomemError("nothing recorded: call record() before the stream starts")
        pending = self.speaking.pending
        listen = np.concatenate([a for a, _ in self._recording] + [np.zeros(pending.size, np.float32)])
        speak = np.concatenate([b for _, b in self._recording] + [pending])
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        sf.write(str(out), np.clip(np.stack([listen, speak], axis=1), -1.0, 1.0), SAMPLE_RATE, subtype="PCM_16")
        return out
