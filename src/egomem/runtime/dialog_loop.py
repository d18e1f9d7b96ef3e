"""The dialog process: it runs in the stream loop itself.

Turn detection (streaming VAD) closes user turns; each finished turn is cut at speaker changes,
transcribed, attributed by its voice and written to the conversation log, and then the dialog
model answers. Its monologue goes through `dialog_step`: the `<retr>` parser, so a query
triggers Level-2 retrieval before the model's next token. What the assistant says is written
to the log and, synthesised, to the speaking channel.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from egomem.dialog.base import DuplexModel, UserTurn
from egomem.dialog.speech import Synthesizer
from egomem.dialog.turns import TurnDetector, Utterance
from egomem.errors import EgomemError
from egomem.identity.attribution import KEPT_OUT_REASONS, SEVERAL_PEOPLE_NAMED, TurnSpeaker
from egomem.perception.asr import Transcriber
from egomem.perception.audio import SAMPLE_RATE
from egomem.retrieval.events import MemChunkUpdated
from egomem.retrieval.process import RetrievalProcess
from egomem.retrieval.query_parser import split_monologue
from egomem.runtime.conversation_log import UNKNOWN_VOICE, ConversationLog, Heard
from egomem.runtime.names import NameLearner
from egomem.runtime.privacy_turns import UNKNOWN, PrivacyTurns
from egomem.runtime.timeline import Timeline
from egomem.schemas import MemChunk
from egomem.stream.buffer import StreamBuffer

# who a turn's voice says spoke (`speaker_of`), with the attributor's decision behind it (None: not attributed)
VoiceCall = tuple[str | None, TurnSpeaker | None]


@dataclass
class ProcessTimes:
    """CPU-side seconds spent per process (wall time inside each process's work)."""

    dialog: float = 0.0
    retrieval: float = 0.0
    memory: float = 0.0
    ingest: float = 0.0


@dataclass
class Voices:
    """How finished user turns are told apart by voice; each None: off.

    `attribute`: who said a turn, by its own voice, given the presumed speaker (the current user).
    `split_turn`: pieces of a turn's audio, one per speaker ((start, end) seconds in it, the voice's
    label within the turn): people who follow each other with no pause share one VAD turn.
    `attribute_voices`: speakers of the voices of one split turn (at most one is the current user)."""

    attribute: Callable[[np.ndarray, str | None], TurnSpeaker] | None = None
    split_turn: Callable[[np.ndarray], list[tuple[float, float, int]]] | None = None
    attribute_voices: Callable[[list[np.ndarray], str | None], list[TurnSpeaker]] | None = None


def dialog_step(model: DuplexModel, retrieval: RetrievalProcess, tokens: Iterable[str]) -> str:
    """The model's monologue through the `<retr>` parser, token by token: a query's Level-2
    chunk reaches the model before its next token. Returns the whole monologue (the query, if
    any, then `<answer>` and what is said aloud; `split_monologue` tells them apart)."""
    said: list[str] = []
    for tok in tokens:
        chunks = retrieval.on_model_text(tok)
        said.append(tok)
        for chunk in chunks:
            model.on_memchunk(chunk)
    return "".join(said)


class SpeakingChannel:
    """The assistant's voice on the speaking channel. A text-only dialog model has no audio of
    its own: its line is synthesised by the assistant's voice (Piper or espeak-ng; the tone
    envelope when neither is installed) and mixed into the channel step by step."""

    def __init__(self, voice: Synthesizer) -> None:
        self.voice = voice
        self.pending = np.zeros(0, dtype=np.float32)  # speech still to be "said"

    def say(self, text: str) -> None:
        self.pending = np.concatenate([self.pending, self.voice.synthesize(text).astype(np.float32)])

    def mix(self, speak: np.ndarray) -> np.ndarray:
        """Add the pending speech to this step of the speaking channel."""
        if self.pending.size == 0:
            return speak
        n = min(speak.size, self.pending.size)
        out = speak.copy()
        out[:n] += self.pending[:n]
        self.pending = self.pending[n:]
        return out


class DialogLoop:
    def __init__(
        self,
        *,
        model: DuplexModel,
        retrieval: RetrievalProcess,
        transcriber: Transcriber,
        turns: TurnDetector,
        voices: Voices,
        log: ConversationLog,
        names: NameLearner,
        speaking: SpeakingChannel,
        buffer: StreamBuffer,
        timeline: Timeline,
        times: ProcessTimes,
        privacy: PrivacyTurns | None = None,
    ) -> None:
        self.model, self.retrieval, self.transcriber = model, retrieval, transcriber
        self.privacy = privacy  # privacy hook: consent answers and "forget me" (None: no policy)
        self.turns, self.voices, self.log, self.names = turns, voices, log, names
        self.speaking, self.buffer, self.timeline, self.times = speaking, buffer, timeline, times
        # Guards the turn detector and `_transcribing` together, so the memory process never
        # sees a turn that the detector has closed but whose transcript is not yet in the log
        # as "no speech pending" (it is in one of the two at every moment).
        self._turn_lock = threading.Lock()
        self._transcribing: list[float] = []  # starts of closed turns being transcribed
        # One monologue at a time: a greeting (retrieval thread) and an answer (stream loop)
        # must not interleave their tokens in the parser.
        self._dialog_lock = threading.RLock()
        retrieval.subscribe(self._on_chunk)

    # -- turns ------------------------------------------------------------------------------
    def hear(self, listen: np.ndarray) -> None:
        """One step of the microphone: turns the detector closes are transcribed and answered."""
        self._take_turns(lambda: self.turns.feed(listen))

    def flush(self) -> None:
        """End of stream: the turn still open is closed and transcribed now."""
        self._take_turns(self.turns.flush)

    def speech_pending_since(self) -> float | None:
        """Start of the earliest user speech whose transcript is not in the log yet: the turn in
        progress, or a closed turn still being transcribed; None when there is none."""
        with self._turn_lock:
            starts = list(self._transcribing)
            if self.turns.open_since is not None:
                starts.append(self.turns.open_since)
        return min(starts, default=None)

    def _take_turns(self, detect: Callable[[], list[Utterance]]) -> None:
        t0 = time.perf_counter()
        with self._turn_lock:
            utterances = detect()
            self._transcribing.extend(u.start for u in utterances)
        self.times.dialog += time.perf_counter() - t0
        for utt in utterances:
            try:
                self.user_turn(utt.start, utt.end, utt.audio)
            finally:
                with self._turn_lock:
                    self._transcribing.remove(utt.start)

    def user_turn(self, start: float, end: float, audio: np.ndarray) -> None:
        """A finished turn, cut at speaker changes: each piece is transcribed and attributed on its own,
        and voices the splitter told apart are never all given to one person (`_voices_by_label`)."""
        pieces = self._turn_pieces(start, end, audio)
        by_label = self._voices_by_label(pieces, end)
        for s, e, a, label in pieces:
            self._user_piece(s, e, a, by_label.get(label))

    def _turn_pieces(self, start: float, end: float, audio: np.ndarray) -> list[tuple[float, float, np.ndarray, int]]:
        if self.voices.split_turn is None:
            return [(start, end, audio, 0)]
        t0 = time.perf_counter()
        try:
            spans = self.voices.split_turn(audio)
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

    def _voices_by_label(self, pieces: list[tuple[float, float, np.ndarray, int]], t: float) -> dict[int, VoiceCall]:
        """Who each voice of a split turn is (label -> what `_speaker_by_voice` gives), when
        the splitter found several voices; empty otherwise (each piece is attributed on its own)."""
        labels = sorted({p[3] for p in pieces})
        if len(labels) < 2 or self.voices.attribute_voices is None:
            return {}
        voices = [np.concatenate([a for _, _, a, lab in pieces if lab == label]) for label in labels]
        current = self.retrieval.current_user()
        try:
            found = self.voices.attribute_voices(voices, current)
        except EgomemError as exc:
            self.timeline.add(t, "warning", text=f"could not attribute the turn's voices: {exc}")
            return {}
        return {label: (speaker_of(f, current), f) for label, f in zip(labels, found, strict=True)}

    def _user_piece(self, start: float, end: float, audio: np.ndarray, decided: VoiceCall | None = None) -> None:
        """One piece of a turn (the whole turn when unsplit); `decided`: its speaker when already
        decided for its voice (`_voices_by_label`), else decided here from the piece's own audio."""
        t0 = time.perf_counter()
        try:
            text = self._transcribe(audio)
        except EgomemError as exc:
            self.timeline.add(end, "warning", text=f"ASR failed: {exc}")
            text = ""
        if text:
            current = self.retrieval.current_user()
            by_voice, found = decided if decided is not None else self._speaker_by_voice(audio, current, end)
            named = self.names.several_named(text)
            if named:  # two people's own names in one piece: two speakers no split told apart (a merge)
                by_voice, found = UNKNOWN_VOICE, TurnSpeaker(None, None, SEVERAL_PEOPLE_NAMED)
            self.log.heard(Heard(start, end, text, by_voice))
            voice = _voice_fields(found)  # the scores behind the decision, for whoever reads the timeline
            if named:
                self.timeline.add(end, "heard", text=text, user=None, how=SEVERAL_PEOPLE_NAMED, names=named)
                self.retrieval.answering(None)
            elif by_voice == UNKNOWN_VOICE:  # someone unknown beside the user: heard, not remembered
                self.timeline.add(end, "heard", text=text, user=None, how="unknown voice", **voice)
                self.retrieval.answering(None)
            elif by_voice is not None:  # the voice says who it is: no need to wait for a poll
                self.timeline.add(end, "heard", text=text, user=by_voice, how="voice", **voice)
                self.retrieval.heard_speaker(by_voice)
                self.names.heard(text, start, end, by_voice)
            else:
                self.timeline.add(end, "heard", text=text, user=current, **voice)
                self.retrieval.answering(None)
                self.names.heard(text, start, end)
            speaker = current if by_voice in (None, UNKNOWN_VOICE) else by_voice
            if self._privacy_turn(text, current, by_voice, end):  # privacy hook: handled, not the model's
                self.times.dialog += time.perf_counter() - t0
                return
            self.speak(self.model.on_user_turn(UserTurn(text, start, end, speaker)), end)
        self.times.dialog += time.perf_counter() - t0

    def _privacy_turn(self, text: str, current: str | None, by_voice: str | None, t: float) -> bool:
        """privacy hook: a consent answer, withdrawal or "forget me" is answered by PrivacyTurns."""
        if self.privacy is None:
            return False
        voice = UNKNOWN if by_voice == UNKNOWN_VOICE else by_voice
        handled = self.privacy.on_turn(text, current, voice)
        if handled is None:
            return False
        self.timeline.add(t, "privacy", user=current, text=handled.what)
        self.assistant_said(handled.say, t)
        if handled.what.startswith(("forget", "withdrawal", "consent:")):
            self.retrieval.refresh_level1()
        return True

    def _speaker_by_voice(self, audio: np.ndarray, current: str | None, t: float) -> VoiceCall:
        """Another enrolled person than the current user when the turn's own voice says so,
        UNKNOWN_VOICE when it is clearly nobody enrolled, else None (the current user's); with
        the attributor's decision (None when there was none)."""
        if self.voices.attribute is None:
            return None, None
        try:
            found = self.voices.attribute(audio, current)
        except EgomemError as exc:
            self.timeline.add(t, "warning", text=f"could not attribute the turn: {exc}")
            return None, None
        return speaker_of(found, current), found

    def _transcribe(self, audio: np.ndarray) -> str:
        """Cased, punctuated text when the ASR gives it (Whisper): sentence ends, question
        marks and capitalised names are what tell a statement from a question and a name
        from a word downstream. Otherwise the ASR's lower-case text."""
        cased = getattr(self.transcriber, "transcribe_cased", None)
        text: str = cased(audio) if callable(cased) else self.transcriber.transcribe(audio)
        return " ".join(text.split())

    # -- the model's side -------------------------------------------------------------------
    def step(self, tokens: Iterable[str]) -> str:
        """`dialog_step` for one monologue at a time (see `_dialog_lock`)."""
        with self._dialog_lock:
            return dialog_step(self.model, self.retrieval, tokens)

    def reply(self, text: str, t: float, user_id: str | None) -> str:
        """The model's answer to a user turn given as text, its `<retr>` queries served, for a
        caller that keeps its own transcript (nothing is logged or said): what it says aloud."""
        _, said = split_monologue(self.step(self.model.on_user_turn(UserTurn(text, t, t, user_id))))
        return " ".join(said.split())

    def speak(self, tokens: Iterator[str], t: float) -> None:
        """Run the model's monologue through `dialog_step` and say its answer."""
        query, text = split_monologue(self.step(tokens))
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
        self.log.said(t, text)
        self.buffer.add_assistant_text(t, text)
        if not has_audio:
            self.speaking.say(text)
        self.timeline.add(t, "assistant", text=text)

    def _on_chunk(self, ev: MemChunkUpdated) -> None:
        chunk = MemChunk(level=ev.level, text=ev.text, tokens=ev.tokens, user_id=ev.user_id, at=ev.at)
        self.timeline.add(
            self.buffer.now_s, "memchunk", level=ev.level, tokens=ev.tokens, user=ev.user_id, text=ev.text
        )
        self.model.on_memchunk(chunk)
        if ev.level == 1:
            self.timeline.add(self.buffer.now_s, "user", user=ev.user_id, how="face/voice")
            # privacy hook (a pending person's chunk carries no user id: they are not in the store)
            first = self.privacy.on_person(self.retrieval.current_user()) if self.privacy else None
            if first is not None:
                self.assistant_said(first, self.buffer.now_s)
                return
            self.speak(self.model.proactive(self.buffer.now_s), self.buffer.now_s)


def _voice_fields(found: TurnSpeaker | None) -> dict[str, object]:
    """The voice decision's scores as timeline fields (none when the voice was not scored)."""
    if found is None or found.score is None:
        return {}
    out: dict[str, object] = {"voice_reason": found.reason, "voice_score": round(found.score, 2)}
    if found.presumed_score is not None:
        out["presumed_score"] = round(found.presumed_score, 2)
    return out


def speaker_of(found: TurnSpeaker, current: str | None) -> str | None:
    """A voice decision as the agent keeps it: another person's id, UNKNOWN_VOICE for a voice that
    is nobody enrolled (or, in a split turn, not the current user's), None for the current user's."""
    if found.reason in KEPT_OUT_REASONS:
        return UNKNOWN_VOICE
    return found.user_id if found.reason == "voice" and found.user_id != current else None
