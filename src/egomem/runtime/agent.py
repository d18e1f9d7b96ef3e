"""EgoMem: the three processes over one stream.

- **dialog** runs in the stream loop itself: turn detection (streaming VAD) and ASR of
  finished user turns, then the dialog model; its monologue goes through the `<retr>`
  parser, so a query triggers Level-2 retrieval before the model's next token.
- **retrieval** polls identity in its own worker thread, scheduled by stream time
  (every `poll_interval_s`); a poll is skipped, never queued, when the previous one is
  still running (back-pressure: identity lags, the dialog never waits).
- **memory management** runs in its own worker thread every `memory_interval_s`:
  the episodic trigger tags the stream since the last finished session, and each
  finished session is extracted and written to the store. A session is finished only
  when every user turn in it has its transcript (see `_manage_memory`), so the end of a
  stream flushes the open turn and transcribes it before the last memory round.

Threads, not processes: the heavy parts (dlib, onnxruntime, torch, pocketsphinx)
release the GIL while they compute, and threads share the store, the models and the
stream buffer without copying. With `lockstep=True` (files processed as fast as
possible) the loop waits for each poll and each memory round, so results do not depend
on machine speed or thread timing.
"""

from __future__ import annotations

import logging
import math
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

import numpy as np
import soundfile as sf

from egomem.config import Config
from egomem.dialog.base import DuplexModel, UserTurn
from egomem.dialog.speech import Synthesizer, ToneSynthesizer
from egomem.dialog.turns import TurnDetector, Utterance
from egomem.errors import EgomemError
from egomem.identity.attribution import TurnSpeaker
from egomem.identity.types import Identification, IdentityStatus
from egomem.memory.items import SessionText, Turn
from egomem.memory.manager import MemoryManager, SessionOutcome
from egomem.memory.rules_extract import name_in
from egomem.memory.social import adopt_name
from egomem.memory.trigger.features import KnownVAD
from egomem.perception.asr import Transcriber
from egomem.perception.audio import SAMPLE_RATE
from egomem.perception.vad import SileroVAD
from egomem.retrieval.events import MemChunkUpdated
from egomem.retrieval.process import RetrievalProcess
from egomem.retrieval.query_parser import split_monologue
from egomem.runtime.memory_queue import AgentQueue
from egomem.runtime.privacy_turns import UNKNOWN, PrivacyTurns
from egomem.runtime.timeline import Timeline
from egomem.schemas import MemChunk, new_id
from egomem.store.base import MemoryStore
from egomem.stream.buffer import StreamBuffer
from egomem.stream.clock import STEP_S
from egomem.stream.sources import Step

log = logging.getLogger(__name__)

# A name heard while the speaker is not yet identified waits this many polls for them.
NAME_WAIT_POLLS = 3
# The speaker of a turn whose voice is clearly not the current user's and not clearly anyone
# else's: the turn stays in the timeline but out of everyone's memory (identity/attribution.py).
UNKNOWN_VOICE = "?unknown-voice"


class Trigger(Protocol):
    def tag(self, listen16k: np.ndarray, speak16k: np.ndarray, vad: KnownVAD | None = None) -> np.ndarray: ...


@dataclass
class Components:
    store: MemoryStore
    retrieval: RetrievalProcess
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
    # Who said a finished user turn, by its own voice (identity.attribution), given the presumed
    # speaker (the current user); None: every turn is the current user's, as with one person.
    attribute: Callable[[np.ndarray, str | None], TurnSpeaker] | None = None
    # Pieces of a finished turn's audio, one per speaker in turn ((start, end) seconds in it and the
    # voice's label within the turn;
    # perception.diarization.TurnSplitter): people who follow each other with no pause share one
    # VAD turn. None: a turn is one piece.
    split_turn: Callable[[np.ndarray], list[tuple[float, float, int]]] | None = None
    # Speakers of the voices of one split turn, told apart by the splitter (identity.attribution's
    # attribute_voices): at most one of them is the current user. None: each piece on its own.
    attribute_voices: Callable[[list[np.ndarray], str | None], list[TurnSpeaker]] | None = None
    # privacy hook: consent question, "forget me", who stays out of memory (runtime/privacy_turns.py).
    # None: no consent policy in force (as `implicit` without the forget-me turns).
    privacy: PrivacyTurns | None = None


class BufferWindow:
    """The retrieval poller's view of the stream buffer (MediaWindow)."""

    def __init__(self, buffer: StreamBuffer, max_age_s: float) -> None:
        self.buffer = buffer
        self.max_age_s = max_age_s

    def last_audio(self, seconds: float) -> np.ndarray | None:
        a = self.buffer.listen.last(seconds)
        return a if a.size else None

    def latest_frames(self, n: int) -> list[np.ndarray]:
        # Only fresh frames: a camera that stopped must not keep "seeing" the last person.
        fresh = self.buffer.video.since(self.buffer.now_s - self.max_age_s)
        return [f.image for f in fresh[-n:]]


@dataclass
class ProcessTimes:
    """CPU-side seconds spent per process (wall time inside each process's work)."""

    dialog: float = 0.0
    retrieval: float = 0.0
    memory: float = 0.0
    ingest: float = 0.0


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


class EgoMem:
    def __init__(self, config: Config, parts: Components, timeline: Timeline | None = None) -> None:
        self.config = config
        self.parts = parts
        self.timeline = timeline or Timeline()
        self.buffer = StreamBuffer(capacity_s=config.runtime.buffer_s)
        self.times = ProcessTimes()
        # The turn detector's VAD history also feeds the trigger (one Silero pass, not two).
        self.turns = TurnDetector(parts.vad, history_s=config.runtime.buffer_s + 2 * config.runtime.memory_interval_s)
        # Transcribed user turns: (start, end, text, speaker by voice; None = the session's user).
        self._heard: list[tuple[float, float, str, str | None]] = []
        self._said: list[tuple[float, str]] = []  # the assistant's lines
        self._presence: list[tuple[float, str | None]] = []  # (poll time, current user)
        self._pending_name: tuple[str, float, str | None] | None = None  # (name, heard at, Level-1 user then)
        self._log_lock = threading.Lock()
        # Guards the turn detector and `_transcribing` together, so the memory process never
        # sees a turn that the detector has closed but whose transcript is not yet in `_heard`
        # as "no speech pending" (it is in one of the two at every moment).
        self._turn_lock = threading.Lock()
        self._transcribing: list[float] = []  # starts of closed turns being transcribed
        self._dialog_lock = threading.RLock()
        self._outcomes: list[SessionOutcome] = []
        self._sessions: list[tuple[float, float, str | None]] = []
        self._mem_origin = 0.0  # memory management has finished everything before this
        self._poll_q: queue.Queue[float | None] = queue.Queue(maxsize=1)
        self._mem_q: queue.Queue[tuple[float, bool] | None] = queue.Queue()
        self._threads: list[threading.Thread] = []
        self.queue = AgentQueue(config, parts.store, parts.manager)  # sessions are written through it
        self._poll_done = threading.Event()
        self._speak_pending = np.zeros(0, dtype=np.float32)  # assistant speech still to be "said"
        self._voice: Synthesizer = parts.voice or ToneSynthesizer()
        self._recording: list[tuple[np.ndarray, np.ndarray]] | None = None  # (listen, speak) per step
        self._next_poll = config.retrieval.poll_interval_s
        self._next_mem = config.runtime.memory_interval_s
        parts.retrieval.window = BufferWindow(self.buffer, max_age_s=config.retrieval.poll_interval_s * 1.5)
        # Stream seconds drive the processes; memory is stored on the wall clock (what a
        # person means by "last Tuesday"): stream time t happened at wall time origin + t.
        self.wall_origin = time.time()
        parts.retrieval.clock = lambda: self.wall_origin + self.buffer.now_s
        parts.retrieval.subscribe(self._on_chunk)

    # -- lifecycle ----------------------------------------------------------------------
    def start(self) -> None:
        for target, name in ((self._retrieval_loop, "egomem-retrieval"), (self._memory_loop, "egomem-memory")):
            th = threading.Thread(target=target, name=name, daemon=True)
            th.start()
            self._threads.append(th)
        self.queue.start()

    def stop(self) -> None:
        """End of stream: close the open turn and session, finish pending memory work."""
        t = self.buffer.now_s
        # The turn still open at the end (the whole call, when nobody paused for 0.8 s) is
        # closed and transcribed here, before the final memory round is queued: that round
        # then sees its transcript, and no session overlapping it is closed without it.
        self._take_turns(self.turns.flush)
        self._poll_q.put(None)
        self._mem_q.put((t, True))
        self._mem_q.put(None)
        for th in self._threads:
            th.join()
        self._threads.clear()
        self.queue.stop()

    def record(self) -> None:
        """Keep both channels (microphone, assistant) from now on, for `write_recording`."""
        self._recording = []

    def write_recording(self, path: str | Path) -> Path:
        """Write the conversation as a 16 kHz stereo WAV: left the microphone (the user), right
        the assistant's voice, including speech still pending when the stream ended."""
        if self._recording is None:
            raise EgomemError("nothing recorded: call record() before the stream starts")
        listen = np.concatenate([a for a, _ in self._recording] + [np.zeros(self._speak_pending.size, np.float32)])
        speak = np.concatenate([b for _, b in self._recording] + [self._speak_pending])
        stereo = np.clip(np.stack([listen, speak], axis=1), -1.0, 1.0)
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        sf.write(str(out), stereo, SAMPLE_RATE, subtype="PCM_16")
        return out

    def run(self, steps: Iterator[Step], *, lockstep: bool = True) -> RunResult:
        """Feed a whole stream through the agent; returns when memory is written."""
        wall0 = time.perf_counter()
        self.start()
        try:
            for step in steps:
                self.advance(step, lockstep=lockstep)
        finally:
            self.stop()
        return self.result(time.perf_counter() - wall0)

    def advance(self, step: Step, *, lockstep: bool) -> None:
        """One 80 ms step: ingest and dialog now; identity polls and memory rounds when due."""
        self.queue.step(step.t, lockstep=lockstep)
        self.feed(step)
        t = step.t + STEP_S
        if t >= self._next_poll:
            self._next_poll += self.config.retrieval.poll_interval_s
            self._request_poll(t, wait=lockstep)
        if t >= self._next_mem:
            self._next_mem += self.config.runtime.memory_interval_s
            self._mem_q.put((t, False))
            if lockstep:
                # The memory round reads identity and the store that polls also write: done
                # before the stream moves on, a lockstep run is repeatable (memorize's resume).
                self._mem_q.join()

    def result(self, wall_s: float) -> RunResult:
        return RunResult(
            duration_s=self.buffer.now_s,
            wall_s=wall_s,
            times=self.times,
            outcomes=list(self._outcomes),
            sessions=list(self._sessions),
            heard=list(self._heard),
        )

    # -- stream + dialog process -----------------------------------------------------------
    def feed(self, step: Step) -> None:
        t0 = time.perf_counter()
        self.buffer.listen.append(step.listen)
        speak = self._mix_speaking(step.speak)
        self.buffer.speak.append(speak)
        if self._recording is not None:
            self._recording.append((step.listen, speak))
        for fr in step.frames:
            self.buffer.video.append(fr)
        self.times.ingest += time.perf_counter() - t0
        t0 = time.perf_counter()
        self.parts.model.on_step(step)
        self.times.dialog += time.perf_counter() - t0
        self._take_turns(lambda: self.turns.feed(step.listen))

    def _take_turns(self, detect: Callable[[], list[Utterance]]) -> None:
        """Run the turn detector (`feed` or `flush`) and transcribe the turns it closed; each one
        counts as pending speech (`_speech_pending_since`) until its transcript is in `_heard`."""
        t0 = time.perf_counter()
        with self._turn_lock:
            utterances = detect()
            self._transcribing.extend(u.start for u in utterances)
        self.times.dialog += time.perf_counter() - t0
        for utt in utterances:
            try:
                self._user_turn(utt.start, utt.end, utt.audio)
            finally:
                with self._turn_lock:
                    self._transcribing.remove(utt.start)

    def _speech_pending_since(self) -> float | None:
        """Start of the earliest user speech whose transcript is not in `_heard` yet: the turn in
        progress, or a closed turn still being transcribed; None when there is none."""
        with self._turn_lock:
            starts = list(self._transcribing)
            if self.turns.open_since is not None:
                starts.append(self.turns.open_since)
        return min(starts, default=None)

    def _mix_speaking(self, speak: np.ndarray) -> np.ndarray:
        """Add the assistant's pending speech to this step of the speaking channel."""
        if self._speak_pending.size == 0:
            return speak
        n = min(speak.size, self._speak_pending.size)
        out = speak.copy()
        out[:n] += self._speak_pending[:n]
        self._speak_pending = self._speak_pending[n:]
        return out

    def _render_speaking_time(self, text: str) -> None:
        """A text-only dialog model has no audio of its own: its line is synthesised by the
        assistant's voice (Piper or espeak-ng; the tone envelope when neither is installed)
        and written to the speaking channel, as a model with audio output would."""
        audio = self._voice.synthesize(text)
        self._speak_pending = np.concatenate([self._speak_pending, audio.astype(np.float32)])

    def _user_turn(self, start: float, end: float, audio: np.ndarray) -> None:
        """A finished turn, cut at speaker changes: each piece is transcribed and attributed on its own,
        and voices the splitter told apart are never all given to one person (`_voices_by_label`)."""
        pieces = self._turn_pieces(start, end, audio)
        by_label = self._voices_by_label(pieces, end)
        for s, e, a, label in pieces:
            self._user_piece(s, e, a, (by_label[label],) if label in by_label else None)

    def _turn_pieces(self, start: float, end: float, audio: np.ndarray) -> list[tuple[float, float, np.ndarray, int]]:
        if self.parts.split_turn is None:
            return [(start, end, audio, 0)]
        t0 = time.perf_counter()
        try:
            spans = self.parts.split_turn(audio)
        except EgomemError as exc:
            self.timeline.add(end, "warning", text=f"could not split the turn: {exc}")
            spans = []
        finally:
            self.times.dialog += time.perf_counter() - t0
        if len(spans) < 2:
            return [(start, end, audio, 0)]
        origin = max(start - self.turns.pad_s, 0.0)  # stream time of audio[0] (the detector pads turns)
        out = []
        for i, (s, e, label) in enumerate(spans):
            piece = audio[round(s * SAMPLE_RATE) : round(e * SAMPLE_RATE)]
            p_start = start if i == 0 else min(max(origin + s, start), end)
            p_end = end if i == len(spans) - 1 else min(max(origin + e, start), end)
            out.append((p_start, p_end, piece, label))
        return out

    def _voices_by_label(self, pieces: list[tuple[float, float, np.ndarray, int]], t: float) -> dict[int, str | None]:
        """Who each voice of a split turn is (label -> speaker as `_speaker_by_voice` gives it), when
        the splitter found several voices; empty otherwise (each piece is attributed on its own)."""
        labels = sorted({p[3] for p in pieces})
        if len(labels) < 2 or self.parts.attribute_voices is None:
            return {}
        voices = [np.concatenate([a for _, _, a, lab in pieces if lab == label]) for label in labels]
        current = self.parts.retrieval.current_user()
        try:
            found = self.parts.attribute_voices(voices, current)
        except EgomemError as exc:
            self.timeline.add(t, "warning", text=f"could not attribute the turn's voices: {exc}")
            return {}
        return {label: _speaker_of(f, current) for label, f in zip(labels, found, strict=True)}

    def _user_piece(
        self, start: float, end: float, audio: np.ndarray, decided: tuple[str | None] | None = None
    ) -> None:
        """One piece of a turn (the whole turn when unsplit); `decided`: its speaker (as
        `_speaker_by_voice` gives it) when already decided for its voice (`_voices_by_label`), else
        decided here from the piece's own audio."""
        t0 = time.perf_counter()
        try:
            text = self._transcribe(audio)
        except EgomemError as exc:
            self.timeline.add(end, "warning", text=f"ASR failed: {exc}")
            text = ""
        if text:
            current = self.parts.retrieval.current_user()
            by_voice = decided[0] if decided is not None else self._speaker_by_voice(audio, current, end)
            with self._log_lock:
                self._heard.append((start, end, text, by_voice))
            if by_voice == UNKNOWN_VOICE:  # someone unknown beside the user: heard, not remembered
                self.timeline.add(end, "heard", text=text, user=None, how="unknown voice")
                self.parts.retrieval.answering(None)
            elif by_voice is not None:  # the voice says who it is: no need to wait for a poll
                self.timeline.add(end, "heard", text=text, user=by_voice, how="voice")
                self.parts.retrieval.heard_speaker(by_voice)
                self._learn_name(text, start, end, by_voice)
            else:
                self.timeline.add(end, "heard", text=text, user=current)
                self.parts.retrieval.answering(None)
                self._learn_name(text, start, end)
            speaker = current if by_voice in (None, UNKNOWN_VOICE) else by_voice
            if self._privacy_turn(text, current, by_voice, end):  # privacy hook: handled, not the model's
                self.times.dialog += time.perf_counter() - t0
                return
            self._speak(self.parts.model.on_user_turn(UserTurn(text, start, end, speaker)), end)
        self.times.dialog += time.perf_counter() - t0

    def _privacy_turn(self, text: str, current: str | None, by_voice: str | None, t: float) -> bool:
        """privacy hook: a consent answer, withdrawal or "forget me" is answered by PrivacyTurns."""
        if self.parts.privacy is None:
            return False
        voice = UNKNOWN if by_voice == UNKNOWN_VOICE else by_voice
        handled = self.parts.privacy.on_turn(text, current, voice)
        if handled is None:
            return False
        self.timeline.add(t, "privacy", user=current, text=handled.what)
        self.assistant_said(handled.say, t)
        if handled.what.startswith(("forget", "withdrawal", "consent:")):
            self.parts.retrieval.refresh_level1()
        return True

    def _speaker_by_voice(self, audio: np.ndarray, current: str | None, t: float) -> str | None:
        """Another enrolled person than the current user when the turn's own voice says so,
        UNKNOWN_VOICE when it is clearly nobody enrolled, else None (the current user's)."""
        if self.parts.attribute is None:
            return None
        try:
            found = self.parts.attribute(audio, current)
        except EgomemError as exc:
            self.timeline.add(t, "warning", text=f"could not attribute the turn: {exc}")
            return None
        return _speaker_of(found, current)

    def _transcribe(self, audio: np.ndarray) -> str:
        """Cased, punctuated text when the ASR gives it (Whisper): sentence ends, question
        marks and capitalised names are what tell a statement from a question and a name
        from a word downstream. Otherwise the ASR's lower-case text."""
        cased = getattr(self.parts.transcriber, "transcribe_cased", None)
        text: str = cased(audio) if callable(cased) else self.parts.transcriber.transcribe(audio)
        return " ".join(text.split())

    def _speak(self, tokens: Iterator[str], t: float) -> None:
        """Run the model's monologue through the <retr> parser, token by token. One
        monologue at a time: a greeting (retrieval thread) and an answer (stream loop)
        must not interleave their tokens in the parser."""
        said: list[str] = []
        with self._dialog_lock:
            for tok in tokens:
                chunks = self.parts.retrieval.on_model_text(tok)
                said.append(tok)
                for chunk in chunks:
                    self.parts.model.on_memchunk(chunk)
        query, text = split_monologue("".join(said))
        if query is not None:
            rel, _, kw = query.replace("<retr>:", "").strip("\n").partition("\n")
            self.timeline.add(t, "retrieval", relations=rel.strip(), keywords=kw.strip())
        self.assistant_said(text, t)

    def assistant_said(self, text: str, t: float | None = None, *, has_audio: bool = False) -> None:
        """Record a line the assistant said (by our model, or by a remote one over the network)."""
        t = self.buffer.now_s if t is None else t
        text = " ".join(text.split())
        if not text:
            return
        with self._log_lock:
            self._said.append((t, text))
        self.buffer.add_assistant_text(t, text)
        if not has_audio:
            self._render_speaking_time(text)
        self.timeline.add(t, "assistant", text=text)

    def _on_chunk(self, ev: MemChunkUpdated) -> None:
        chunk = MemChunk(level=ev.level, text=ev.text, tokens=ev.tokens, user_id=ev.user_id, at=ev.at)
        self.timeline.add(
            self.buffer.now_s, "memchunk", level=ev.level, tokens=ev.tokens, user=ev.user_id, text=ev.text
        )
        self.parts.model.on_memchunk(chunk)
        if ev.level == 1:
            self.timeline.add(self.buffer.now_s, "user", user=ev.user_id, how="face/voice")
            # privacy hook (a pending person's chunk carries no user id: they are not in the store)
            first = self.parts.privacy.on_person(self.parts.retrieval.current_user()) if self.parts.privacy else None
            if first is not None:
                self.assistant_said(first, self.buffer.now_s)
                return
            self._speak(self.parts.model.proactive(self.buffer.now_s), self.buffer.now_s)

    # -- retrieval process ------------------------------------------------------------------
    def _request_poll(self, t: float, *, wait: bool) -> None:
        if wait:
            self._poll_done.clear()
            self._poll_q.put(t)
            self._poll_done.wait()
            return
        try:
            self._poll_q.put_nowait(t)  # busy: skip this poll rather than queue it
        except queue.Full:
            self.timeline.add(t, "warning", text="identity poll skipped: previous poll still running")

    def _retrieval_loop(self) -> None:
        while True:
            t = self._poll_q.get()
            if t is None:
                return
            t0 = time.perf_counter()
            try:
                ident = self.parts.retrieval.poll_once()
                if self.parts.privacy is not None:  # privacy hook: who face and voice say it is
                    self.parts.privacy.observed(ident)
                current = self.parts.retrieval.current_user()
                with self._log_lock:
                    self._presence.append((t, current))
                self._settle_pending_name(t, current)
                if self.parts.learn is not None and ident.user_id is not None and ident.user_id == current:
                    self.parts.learn(ident)  # key refresh only from confirmed (debounced) matches
            except Exception:  # a failed poll must not kill the process; the next one retries
                log.exception("identity poll failed")
            finally:
                self.times.retrieval += time.perf_counter() - t0
                self._poll_done.set()

    # -- memory management process ------------------------------------------------------------
    def _memory_loop(self) -> None:
        while True:
            item = self._mem_q.get()
            if item is None:
                self._mem_q.task_done()
                return
            t, final = item
            t0 = time.perf_counter()
            try:
                self._manage_memory(t, final)
            except Exception:  # keep the process alive; the sessions stay for the next round
                log.exception("memory management failed")
            finally:
                self.times.memory += time.perf_counter() - t0
                self._mem_q.task_done()

    def _manage_memory(self, now_s: float, final: bool) -> None:
        origin = max(self._mem_origin, now_s - self.config.runtime.buffer_s + 1.0)
        listen = self.buffer.listen.window(origin, now_s)
        speak = self.buffer.speak.window(origin, now_s)
        if listen.size < SAMPLE_RATE:
            return
        if speak.size != listen.size:
            speak = np.resize(speak, listen.size) if speak.size else np.zeros_like(listen)
        first = round(origin * SAMPLE_RATE)  # the window's first sample (origins are whole steps)
        probs, vad_start = self.turns.vad_since(first)
        labels = self.parts.trigger.tag(listen, speak, KnownVAD(probs, vad_start - first))
        # Not final while a continuation by the same person could still merge into it.
        margin = max(self.config.runtime.session_margin_s, self.config.runtime.session_merge_gap_s)
        spans = [(origin + a * STEP_S, origin + (b + 1) * STEP_S) for a, b in self.parts.sessions(labels)]
        # Read before the heard turns (`_cover_turns`): a turn is pending or heard at every moment,
        # so one that is neither now started after this point, i.e. after every span here.
        pending = self._speech_pending_since()
        for start, end in self._cover_turns(self._merge_same_person(spans), now_s):
            if not final and end > now_s - margin:
                break  # still open (or too fresh to be sure it ended): next round
            if not final and pending is not None and pending < end:
                # A turn that started inside this session is still open or being transcribed:
                # closing now would store the session without it (the phone call's whole 23 s
                # turn arrived after its session was closed "empty"). The next round decides,
                # with the turn heard; the stream's end flushes and transcribes it first.
                break
            self._finish_session(start, end)
            self._mem_origin = end
        if final:
            self._mem_origin = now_s

    def _cover_turns(self, spans: list[tuple[float, float]], now_s: float) -> list[tuple[float, float]]:
        """Each heard turn belongs to exactly one session, whole: a session grows to cover every
        turn not yet stored that overlaps it (its start back to the turn's start, its end to the
        turn's end, rounded up to a whole step), and sessions that then overlap are one.

        Why grow rather than cut: a transcript cannot be split in time, and the trigger's span
        boundaries (from VAD and the assistant's channel, every 80 ms) often fall inside a long
        VAD turn that runs over several people. Left as they were, the turn would either reach
        no session (closed before it was transcribed: dropped) or two (stored twice)."""
        with self._log_lock:
            heard = [(s, e) for s, e, _, _ in self._heard if s >= self._mem_origin]
        out: list[tuple[float, float]] = []
        for start, end in spans:
            if out and start < out[-1][1]:  # reached by the previous session's turns: one session
                prev_start, prev_end = out.pop()
                start, end = prev_start, max(end, prev_end)
            grown, trigger_end = True, end
            while grown:
                grown = False
                for s, e in heard:
                    if s < end and e > start and (s < start or e > end):
                        start, end, grown = min(start, s), max(end, e), True
            if end > trigger_end:  # the next round's window starts here: keep it on a whole step
                end = min(now_s, math.ceil(end / STEP_S - 1e-6) * STEP_S)
            out.append((start, end))
        return out

    def _merge_same_person(self, spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
        """Fuse the trigger with identity: spans of the same person less than
        `session_merge_gap_s` apart are one session (the trigger's spurious splits), while
        back-to-back sessions of different people stay apart."""
        out: list[tuple[float, float]] = []
        for start, end in spans:
            if out and start - out[-1][1] < self.config.runtime.session_merge_gap_s:
                prev_user = self._presence_user(*out[-1])
                if prev_user is not None and prev_user == self._presence_user(start, end):
                    out[-1] = (out[-1][0], end)
                    continue
            out.append((start, end))
        return out

    def _presence_user(self, start: float, end: float) -> str | None:
        # Identity is confirmed a couple of polls after a person appears (debounce), so a
        # short session is attributed by what the polls decided just after it too.
        lag = 3 * self.config.retrieval.poll_interval_s
        with self._log_lock:
            return _majority([(u, start <= t <= end) for t, u in self._presence if start <= t <= end + lag])

    def _learn_name(self, text: str, start: float, end: float, by_voice: str | None = None) -> None:
        """A user whose name memory lacks says it ("I'm Anna"): write it now, not after the
        session, and refresh Level 1 so the dialog model knows it at once.

        Who said it must be certain, or a name lands on the wrong person. The Level-1 user
        is debounced, so just after a change of person it is still the previous one: the name
        goes to the current user only when a poll during the utterance matched that user
        itself; otherwise it waits for the next user to become current (a newly enrolled
        person, typically) within `NAME_WAIT_POLLS` polls, and is dropped after that (the
        session's extraction still finds it). A turn attributed by its own voice (`by_voice`)
        needs no poll: the name is that person's."""
        try:
            name = name_in(text, [u.name for u in self.parts.store.list_users() if u.name])
        except EgomemError as exc:
            self.timeline.add(end, "warning", text=f"could not read a name: {exc}")
            return
        if name is None:
            return
        if by_voice is not None:
            self._adopt_name(by_voice, name, end)
            return
        user = self.parts.retrieval.current_user()
        interval = self.config.retrieval.poll_interval_s
        seen = self.parts.retrieval.matches_between(self.wall_origin + start - interval, self.wall_origin + end + 1e-3)
        if user is not None and seen and all(u == user for u in seen):
            self._adopt_name(user, name, end)
        else:
            with self._log_lock:
                self._pending_name = (name, end, user)

    def _settle_pending_name(self, t: float, current: str | None) -> None:
        with self._log_lock:
            pending = self._pending_name
            if pending is None:
                return
            if t - pending[1] > NAME_WAIT_POLLS * self.config.retrieval.poll_interval_s:
                self._pending_name = None
                return
        if current is None or current == pending[2]:
            return  # still the previous user (or nobody): wait for the speaker to be identified
        with self._log_lock:
            self._pending_name = None
        self._adopt_name(current, pending[0], t)

    def _adopt_name(self, user: str, name: str, t: float) -> None:
        if self._name_of(user) is not None:
            return
        try:
            with self.parts.store.transaction():
                done = adopt_name(self.parts.store, user, name, cause="name said during the session")
        except EgomemError as exc:
            self.timeline.add(t, "warning", text=f"could not record the name: {exc}")
            return
        self.timeline.add(t, "memory", op="NAME", user=user, text=f"{name} ({done})")
        self.parts.retrieval.refresh_level1()

    def _name_of(self, user_id: str | None) -> str | None:
        if user_id is None:
            return None
        try:
            return self.parts.store.get_user(user_id).name
        except EgomemError:
            return None

    def _finish_session(self, start: float, end: float) -> None:
        """Memory for one session. With several people in it (turns attributed to another
        enrolled person by voice), each person's turns are their own session text, with all
        the assistant's lines for context, so each person's facts land on them and what one
        says about another ("this is my husband Ben") links the speaker to that person."""
        with self._log_lock:
            heard = [(s, e, x, who) for s, e, x, who in self._heard if s < end and e > start]
            said = [(t, x) for t, x in self._said if start <= t <= end + 1.0]
        user = self._presence_user(start, end)
        if self.parts.privacy is not None:  # privacy hook: a pending id that agreed is now a user
            user = self.parts.privacy.gate.resolve(user)
        self._sessions.append((start, end, user))
        by_person: dict[str | None, list[tuple[float, float, str]]] = {}
        for s, e, x, who in heard:
            by_person.setdefault(who or user, []).append((s, e, x))
        unknown = by_person.pop(UNKNOWN_VOICE, [])
        if unknown:
            what = f"{len(unknown)} turn(s) by an unknown voice kept out of memory"
            self.timeline.add(end, "memory", op="SKIPPED", user=None, text=what)
        speakers = [p for p in by_person if p is not None]
        self.timeline.add(
            end, "session", start=start, end=end, user=user, **({"speakers": speakers} if len(by_person) > 1 else {})
        )
        for person, own in by_person.items() or [(user, [])]:
            if self.parts.privacy is not None and self.parts.privacy.keeps_out(person):  # privacy hook
                self.timeline.add(end, "memory", op="SKIPPED", user=None, text="no consent: kept out of memory")
                continue
            self._process_session(start, end, person, own, said)

    def _process_session(
        self,
        start: float,
        end: float,
        user: str | None,
        heard: list[tuple[float, float, str]],
        said: list[tuple[float, str]],
    ) -> None:
        turns = [Turn(speaker="user", text=x, start=s, end=e) for s, e, x in heard]
        turns += [Turn(speaker="assistant", text=x, start=t, end=t) for t, x in said]
        turns.sort(key=lambda tr: tr.start or 0.0)
        session = SessionText(
            episode_id=new_id("e"),
            start=self.wall_origin + start,
            end=self.wall_origin + end,
            date=datetime.fromtimestamp(self.wall_origin + start, UTC).strftime("%-d %B %Y"),
            turns=turns,
            user_name=self._name_of(user),
        )
        ident = Identification(IdentityStatus.KNOWN, user_id=user) if user else None
        outcome = self.queue.process(session, ident)
        self._outcomes.append(outcome)
        if not outcome.ok:
            self.timeline.add(end, "memory", op="FAILED", user=user, text=outcome.reason)
        for op, _, text in outcome.applied.ops:
            self.timeline.add(end, "memory", op=op, user=outcome.user_id, text=text)
        for c in outcome.checked:  # what the post-check kept out of memory, and why
            done = "" if c.replaced_by is None else f" -> {c.replaced_by.text}"
            op = "DROPPED" if c.replaced_by is None else "REWROTE"
            self.timeline.add(end, "memory", op=op, user=outcome.user_id, text=f"{c.item.text}{done} ({c.why})")
        if outcome.user_id and outcome.user_id == self.parts.retrieval.current_user():
            self.parts.retrieval.refresh_level1()


def _speaker_of(found: TurnSpeaker, current: str | None) -> str | None:
    """A voice decision as the agent keeps it: another person's id, UNKNOWN_VOICE for a voice that
    is nobody enrolled (or, in a split turn, not the current user's), None for the current user's."""
    if found.reason in ("unknown voice", "another voice in the turn"):
        return UNKNOWN_VOICE
    return found.user_id if found.reason == "voice" and found.user_id != current else None


def _majority(polls: list[tuple[str | None, bool]]) -> str | None:
    """The user most polls saw (polls: user, whether the poll fell inside the session itself
    rather than in the lag after it). A tie goes to more polls inside the session, then to the
    later user (identity is debounced: the newest poll is the surest). Never to set or hash
    order: that differs between processes and made a replayed recording's memory differ."""
    score: dict[str, tuple[int, int, int]] = {}
    for i, (user, inside) in enumerate(polls):
        if user is not None:
            n, n_in, _ = score.get(user, (0, 0, 0))
            score[user] = (n + 1, n_in + int(inside), i)
    return max(score, key=lambda u: score[u]) if score else None
