"""From a finished session's audio to the extractor's input: clip, segment, transcribe, identify.

The episodic trigger gives the session's span on the listening channel; this module
clips it, splits the user's speech with the VAD, transcribes each segment with any ASR
(`Transcriber`: egomem.perception.asr backends fit), and identifies the user from
several segments (not one) with any `Identifier` (egomem.identity.identifier fits):
the majority of the segments' decisions wins, and a session where segments point at
different known people is flagged as having several voices.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from egomem.errors import InputError
from egomem.identity.types import Identification, Identifier, IdentityStatus
from egomem.memory.items import SessionText, Turn
from egomem.perception.asr import Transcriber
from egomem.perception.audio import SAMPLE_RATE
from egomem.perception.vad import Segment


class SpeechSegmenter(Protocol):
    def segments(self, audio: np.ndarray) -> list[Segment]: ...


@dataclass
class AudioSession:
    episode_id: str
    listening: np.ndarray  # 16 kHz mono float32 of the stream (or of a longer clip around the session)
    start_s: float  # the session's span in `listening`, in seconds (from the trigger)
    end_s: float
    t0: float  # Unix time of listening[0]
    assistant_text: list[str] = field(default_factory=list)
    frames: Sequence[np.ndarray] = ()  # video frames of the session, for the face


@dataclass
class AudioTranscript:
    session: SessionText
    identification: Identification
    voices: int  # distinct people the segments were matched to (NEW counts as one)
    segments: int


def transcribe_session(
    s: AudioSession,
    asr: Transcriber,
    vad: SpeechSegmenter,
    identifier: Identifier,
    *,
    min_id_speech_s: float = 1.0,
    max_id_segments: int = 5,
) -> AudioTranscript:
    audio = np.asarray(s.listening, dtype=np.float32)
    if audio.ndim != 1:
        raise InputError("the listening channel must be 16 kHz mono (a 1-d array)")
    a, b = round(s.start_s * SAMPLE_RATE), round(s.end_s * SAMPLE_RATE)
    if not 0 <= a < b <= audio.size:
        raise InputError(f"session span {s.start_s:.2f}-{s.end_s:.2f} s is outside the audio")
    clip = audio[a:b]
    segs = vad.segments(clip)
    turns = []
    for seg in segs:
        text = asr.transcribe(clip[round(seg.start * SAMPLE_RATE) : round(seg.end * SAMPLE_RATE)]).strip()
        if text:
            turns.append(
                Turn(speaker="user", text=text, start=s.t0 + s.start_s + seg.start, end=s.t0 + s.start_s + seg.end)
            )
    turns += [Turn(speaker="assistant", text=t) for t in s.assistant_text if t.strip()]
    ident, voices = _identify(clip, segs, s.frames, identifier, min_id_speech_s, max_id_segments)
    start = s.t0 + s.start_s
    session = SessionText.dated(start, s.t0 + s.end_s, turns, episode_id=s.episode_id)
    return AudioTranscript(session=session, identification=ident, voices=voices, segments=len(segs))


def _identify(
    clip: np.ndarray,
    segs: list[Segment],
    frames: Sequence[np.ndarray],
    identifier: Identifier,
    min_s: float,
    k: int,
) -> tuple[Identification, int]:
    longest = sorted((g for g in segs if g.duration >= min_s), key=lambda g: -g.duration)[:k]
    if not longest:
        # Too little speech for a voice: the face alone decides, if there is one.
        return (identifier.identify(None, frames) if frames else Identification(IdentityStatus.UNKNOWN)), 0
    votes = [
        identifier.identify(clip[round(g.start * SAMPLE_RATE) : round(g.end * SAMPLE_RATE)], frames if i == 0 else ())
        for i, g in enumerate(longest)
    ]
    known = Counter(v.user_id for v in votes if v.status == IdentityStatus.KNOWN and v.user_id)
    new = [v for v in votes if v.status == IdentityStatus.NEW]
    voices = len(known) + (1 if new else 0)
    if known:
        uid, n = known.most_common(1)[0]
        if n >= len(new):
            return next(v for v in votes if v.user_id == uid), voices
    if new:
        return new[0], voices  # the longest new-voice segment carries the key to enrol
    return Identification(IdentityStatus.UNKNOWN), voices
