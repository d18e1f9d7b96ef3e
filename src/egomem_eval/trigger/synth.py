"""Synthetic two-channel dialog streams made from real speech, with exact step labels.

A stream has 1-4 user sessions. A session is several user turns, each answered by the
assistant on the speaking channel, timed as the runtime answers: the reply starts when
the turn detector has heard 0.8 s of silence (plus 0-0.3 s), and it is never cut short
(the runtime keeps speaking when the user barges in, p=0.2; the reply to the barge-in
queues behind it). When the next session is a new user, the assistant greets them with
p=0.5 1.5-4 s after they start speaking (the identity poll), as the runtime does. The
session span runs from the user's first speech to the end of the session's last turn
(user or assistant, whichever ends later).

Session boundaries (one convention for every condition, so it is learnable):
- a new session is another user (any gap, even none) or the same user after >= 12 s of
  silence (they went away and came back);
- inside a session the user may be silent up to 8 s (thinking) and stays in session.

Conditions (`CONDITIONS`), each a different kind of stream:
- `runtime`: the above; users speak 1-6 s turns, 0.3-1.5 s after the reply ends;
- `back_to_back`: every next session is another user starting 0-0.2 s after the last one ends;
- `one_word`: users mostly answer the assistant with one word (0.35-0.8 s of speech);
- `long_silence`: users often pause 3-8 s inside a session before they answer;
- `tv`: a TV (other people's speech, recorded audio) plays through the whole stream,
  10-16 dB below the users.

The noised copy of a stream adds (as in the paper): microphone echo of the speaking
channel (p=0.3, gain 0-0.2, delay 0.1-0.5 s), other people's speech in the background
(p=0.5) and, in a long gap, an utterance nobody answers (p=0.3, label 0), and white
noise at 10-30 dB SNR.

The assistant's voice: the caller passes the audio of the product's own TTS speaking
the template responder's lines (egomem_eval.assistant_lines); without it, LibriSpeech
speaker 3080 (the assistant of the first benchmark).

Speaker split: training users are the 40 LibriSpeech train-clean-100 speakers; held-out
users are the LibriSpeech test-other speakers except 3080. Background speech: pyannote
meeting excerpts trn* and FSDD george/jackson/lucas for training; tst*/dev*/sample and
FSDD nicolas/theo/yweweler for evaluation. TV: the Hamilton clip and the pyannote trn*
meetings for training; the VisualVoice interview and noisy-restaurant clips and the two
pyAudioAnalysis diarization recordings for evaluation.
"""

from __future__ import annotations

import csv
import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from egomem.errors import InputError
from egomem.memory.trigger.features import STEP_S
from egomem.memory.trigger.labels import session_labels
from egomem.perception.audio import SAMPLE_RATE, add_noise, load_audio
from egomem.perception.vad import Segment, SileroVAD

Split = Literal["train", "eval"]
ASSISTANT_SPEAKER = "3080"
STEP_SAMPLES = round(STEP_S * SAMPLE_RATE)
REPLY_AFTER_S = 0.8  # the runtime's turn detector (dialog.turns, end_silence_s): replies start after it
SAME_USER_GAP_S = (12.0, 25.0)  # the same user's next session: away and back
LONG_SILENCE_S = (3.0, 8.0)  # a pause inside a session (shorter than any same-user gap)


@dataclass(frozen=True)
class Condition:
    name: str
    back_to_back: bool = False  # every next session: another user, 0-0.2 s after the last one ends
    one_word: float = 0.0  # probability that a later user turn is one word (the first: a third of it)
    long_silence: float = 0.0  # probability of a 3-8 s silence before a later user turn
    tv: bool = False  # a TV plays through the whole stream
    min_turns: int = 1


CONDITIONS: dict[str, Condition] = {
    c.name: c
    for c in (
        Condition("runtime"),
        Condition("back_to_back", back_to_back=True),
        Condition("one_word", one_word=0.7, min_turns=2),
        Condition("long_silence", long_silence=0.5, min_turns=2),
        Condition("tv", tv=True),
    )
}


@dataclass
class Utterance:
    audio: np.ndarray
    segments: list[Segment]  # speech segments, so turns start and end on speech


@dataclass
class AssistantVoice:
    """The assistant's lines as the product's TTS says them (16 kHz, the level it outputs)."""

    name: str  # the synthesizer, part of the feature-cache key
    replies: list[np.ndarray]
    greetings: list[np.ndarray]


@dataclass
class SpeechPools:
    users: dict[str, list[Utterance]]
    assistant: list[Utterance]
    background: list[np.ndarray]
    tv: list[np.ndarray] = field(default_factory=list)
    greetings: list[Utterance] = field(default_factory=list)
    whole_lines: bool = False  # the assistant says whole lines at their own level (TTS)


@dataclass
class Stream:
    listen: np.ndarray
    speak: np.ndarray
    labels: np.ndarray  # int8 per step
    sessions: list[tuple[int, int]]  # (start_step, end_step), end inclusive
    users: list[str] = field(default_factory=list)  # speaker id of each session


def _utterance(path: Path, vad: SileroVAD) -> Utterance:
    audio = load_audio(path)
    segs = vad.segments(audio, min_silence_s=0.25, pad_s=0.02)
    if not segs:
        segs = [Segment(0.0, len(audio) / SAMPLE_RATE)]
    return Utterance(audio, segs)


def _line(audio: np.ndarray) -> Utterance:
    a = np.asarray(audio, dtype=np.float32)
    return Utterance(a, [Segment(0.0, a.size / SAMPLE_RATE)])


def load_pools(
    data_dir: Path, split: Split, vad: SileroVAD | None = None, max_utts: int = 0, voice: AssistantVoice | None = None
) -> SpeechPools:
    """Read the speech of `split` from ../shared/data (see the module docstring for the split).

    `max_utts` > 0 keeps only that many utterances per speaker (quick runs). `voice`: the
    assistant's TTS lines (else LibriSpeech speaker 3080)."""
    vad = vad or SileroVAD()
    other = data_dir / "speech_librispeech_test_other_10spk"
    train = data_dir / "speech_librispeech_train_clean_100_1utt"
    meetings = data_dir / "speech_pyannote_diarization"
    fsdd = data_dir / "speech_fsdd_subset"
    if split == "train":
        tv_files = [data_dir / "av_hamilton_clip" / "short_hamilton_clip.mp4"]
    else:
        tv_files = [
            data_dir / "visualvoice_interview" / "interview.mp4",
            data_dir / "visualvoice_noisy_restaurant" / "noisy_restaurant.mp4",
            data_dir / "pyaudioanalysis_diarization" / "diarizationExample.wav",
            data_dir / "pyaudioanalysis_diarization" / "diarizationExample2.wav",
        ]
    for d in (other, train, meetings, fsdd, *(p.parent for p in tv_files)):
        if not d.is_dir():
            raise InputError(f"speech data folder not found: {d}")
    users: dict[str, list[Utterance]] = {}
    assistant: list[Utterance] = []
    with open(other / "manifest.csv", newline="") as f:
        for row in csv.DictReader(f):
            spk = row["speaker_id"]
            if spk == ASSISTANT_SPEAKER and voice is not None:
                continue
            if max_utts > 0 and len(assistant if spk == ASSISTANT_SPEAKER else users.get(spk, [])) >= max(max_utts, 3):
                continue
            if spk == ASSISTANT_SPEAKER:
                assistant.append(_utterance(other / row["path"], vad))
            elif split == "eval":
                users.setdefault(spk, []).append(_utterance(other / row["path"], vad))
    if split == "train":
        with open(train / "manifest.csv", newline="") as f:
            for row in csv.DictReader(f):
                users.setdefault(row["speaker_id"], []).append(_utterance(train / row["path"], vad))
        wavs = sorted((meetings / "debug_meetings").glob("trn*.wav"))
        fsdd_speakers: tuple[str, ...] = ("george", "jackson", "lucas")
        tv_files += wavs
    else:
        wavs = sorted((meetings / "debug_meetings").glob("tst*.wav")) + sorted(
            (meetings / "debug_meetings").glob("dev*.wav")
        )
        wavs.append(meetings / "sample" / "sample.wav")
        fsdd_speakers = ("nicolas", "theo", "yweweler")
    if max_utts > 0:  # quick runs: one recording of each kind of background speech
        wavs, fsdd_speakers, tv_files = wavs[:1], fsdd_speakers[:1], tv_files[:1]
    background = [load_audio(p) for p in wavs]
    for spk in fsdd_speakers:
        clips = [load_audio(p) for p in sorted((fsdd / "recordings").glob(f"*_{spk}_*.wav"))]
        gap = np.zeros(int(0.3 * SAMPLE_RATE), dtype=np.float32)
        background.append(np.concatenate([x for c in clips for x in (c, gap)]))
    tv = [load_audio(p) for p in tv_files]
    if max_utts > 0:
        users = {k: v[:max_utts] for k, v in users.items()}
        assistant = assistant[: max(max_utts, 3)]
    if voice is None:
        return SpeechPools(users, assistant, background, tv)
    if not voice.replies:
        raise InputError("the assistant voice has no lines")
    return SpeechPools(
        users, [_line(a) for a in voice.replies], background, tv, [_line(a) for a in voice.greetings], True
    )


def _turn(rng: np.random.Generator, utts: list[Utterance], lo: float, hi: float) -> np.ndarray:
    """A run of consecutive speech segments of one utterance, about lo-hi seconds long."""
    u = utts[int(rng.integers(len(utts)))]
    target = rng.uniform(lo, hi)
    i = int(rng.integers(len(u.segments)))
    j = i
    while j + 1 < len(u.segments) and u.segments[j].end - u.segments[i].start < target:
        j += 1
    a, b = int(u.segments[i].start * SAMPLE_RATE), int(u.segments[j].end * SAMPLE_RATE)
    return u.audio[a:b]


def one_word(rng: np.random.Generator, utts: list[Utterance], lo: float = 0.35, hi: float = 0.8) -> np.ndarray:
    """A one-word answer: a lo-hi s speech segment of the speaker, else a lo-hi s cut of a
    longer one, faded in and out over 20 ms."""
    u = utts[int(rng.integers(len(utts)))]
    short = [s for s in u.segments if lo <= s.end - s.start <= hi]
    if short:
        seg = short[int(rng.integers(len(short)))]
        a0, a1 = seg.start, seg.end
    else:
        seg = u.segments[int(rng.integers(len(u.segments)))]
        dur = rng.uniform(lo, hi)
        a0 = seg.start + rng.uniform(0.0, max(0.0, seg.end - seg.start - dur))
        a1 = min(seg.end, a0 + dur)
    x = u.audio[int(a0 * SAMPLE_RATE) : int(a1 * SAMPLE_RATE)].astype(np.float32)
    fade = min(320, x.size // 4)
    if fade:
        ramp = np.linspace(0.0, 1.0, fade, dtype=np.float32)
        x[:fade] *= ramp
        x[-fade:] *= ramp[::-1]
    return x


def _at_level(x: np.ndarray, db: float) -> np.ndarray:
    rms = float(np.sqrt(np.mean(np.square(x, dtype=np.float64)))) or 1e-6
    return (x * (10 ** (db / 20) / rms)).astype(np.float32)


class _Tracks:
    """Two growing sample buffers that clips are added into at absolute times."""

    def __init__(self) -> None:
        self.listen = np.zeros(SAMPLE_RATE * 60, dtype=np.float32)
        self.speak = np.zeros(SAMPLE_RATE * 60, dtype=np.float32)

    def add(self, channel: str, t: float, x: np.ndarray) -> float:
        buf = getattr(self, channel)
        a = int(t * SAMPLE_RATE)
        if a + x.size > buf.size:
            buf = np.pad(buf, (0, a + x.size - buf.size + SAMPLE_RATE * 30))
            setattr(self, channel, buf)
        buf[a : a + x.size] += x
        return t + x.size / SAMPLE_RATE


def _reply(rng: np.random.Generator, pools: SpeechPools, lines: list[Utterance]) -> np.ndarray:
    if pools.whole_lines:  # the product's TTS: a whole line at the level it speaks
        return lines[int(rng.integers(len(lines)))].audio
    return _at_level(_turn(rng, lines, 1.0, 5.0), rng.uniform(-26.0, -22.0))


def _session(
    tr: _Tracks, rng: np.random.Generator, pools: SpeechPools, cond: Condition, user: str, t: float, greet: bool
) -> float:
    """One session of `user` starting at `t` (their first speech); returns its end."""
    level = rng.uniform(-32.0, -20.0)
    n_turns = int(rng.integers(cond.min_turns, 5))
    busy = 0.0  # the speaking channel is busy until then (lines queue, as in the runtime)
    greet_at = t + rng.uniform(1.5, 4.0) if greet and pools.greetings and rng.random() < 0.5 else None
    end = t
    for k in range(n_turns):
        word = rng.random() < (cond.one_word if k else cond.one_word / 3)
        clip = one_word(rng, pools.users[user]) if word else _turn(rng, pools.users[user], 1.0, 6.0)
        u_end = tr.add("listen", t, _at_level(clip, level))
        if greet_at is not None and greet_at < u_end + REPLY_AFTER_S:  # identified before the reply
            busy = tr.add("speak", max(greet_at, busy), _reply(rng, pools, pools.greetings))
            greet_at = None
        reply = _reply(rng, pools, pools.assistant)
        r_start = max(u_end + REPLY_AFTER_S + rng.uniform(0.0, 0.3), busy)
        busy = tr.add("speak", r_start, reply)
        end = max(u_end, busy)
        reply_s = reply.size / SAMPLE_RATE
        if k + 1 < n_turns and rng.random() < 0.2 and reply_s > 1.5:
            t = r_start + rng.uniform(0.5, reply_s - 0.5)  # barge-in: the runtime keeps speaking
        elif rng.random() < cond.long_silence:
            t = end + rng.uniform(*LONG_SILENCE_S)
        else:
            t = end + rng.uniform(0.3, 1.5)
    return end


def make_stream(rng: np.random.Generator, pools: SpeechPools, cond: Condition | str = "runtime") -> Stream:
    """One clean stream of condition `cond` (see the module docstring)."""
    c = CONDITIONS[cond] if isinstance(cond, str) else cond
    tr = _Tracks()
    speakers = sorted(pools.users)
    t = rng.uniform(0.5, 5.0)
    spans: list[tuple[float, float]] = []
    who: list[str] = []
    prev: str | None = None
    for k in range(int(rng.integers(2 if c.back_to_back else 1, 5))):
        same = prev is not None and (len(speakers) == 1 or (not c.back_to_back and rng.random() < 0.25))
        if k:
            if same:
                t += rng.uniform(*SAME_USER_GAP_S)
            elif c.back_to_back:
                t += rng.uniform(0.0, 0.2)
            else:
                t += rng.uniform(0.2, 1.0) if rng.random() < 0.35 else rng.uniform(2.5, 10.0)
        choices = [s for s in speakers if s != prev] or speakers
        user = prev if same and prev is not None else choices[int(rng.integers(len(choices)))]
        end = _session(tr, rng, pools, c, user, t, greet=user != prev)
        spans.append((t, end))
        who.append(user)
        prev, t = user, end
    total = spans[-1][1] + rng.uniform(0.5, 4.0)
    steps = int(total / STEP_S)
    n = steps * STEP_SAMPLES
    listen, speak = np.pad(tr.listen, (0, max(0, n - tr.listen.size)))[:n], np.pad(tr.speak, (0, n))[:n]
    if c.tv and pools.tv:
        listen = listen + _tv(rng, pools, n, _speech_level(listen) - rng.uniform(10.0, 16.0))
    labels, sessions = session_labels(spans, steps)
    return Stream(listen, speak, labels, sessions, who)


def _tv(rng: np.random.Generator, pools: SpeechPools, n: int, db: float) -> np.ndarray:
    """A TV: one recording of other people looped over the stream, at `db`."""
    rec = pools.tv[int(rng.integers(len(pools.tv)))]
    off = int(rng.integers(rec.size))
    return _at_level(np.tile(rec, -(-n // rec.size) + 1)[off : off + n], db)


def noised(stream: Stream, rng: np.random.Generator, pools: SpeechPools) -> Stream:
    """The noised copy: echo, other people's speech, unanswered speech in a gap, white noise."""
    listen = stream.listen.copy()
    n = listen.size
    if rng.random() < 0.3:
        delay = int(rng.uniform(0.1, 0.5) * SAMPLE_RATE)
        listen[delay:] += rng.uniform(0.0, 0.2) * stream.speak[: n - delay]
    speech_db = _speech_level(stream.listen)
    if rng.random() < 0.5:
        bg = pools.background[int(rng.integers(len(pools.background)))]
        reps = -(-n // bg.size) + 1
        off = int(rng.integers(bg.size))
        listen += _at_level(np.tile(bg, reps)[off : off + n], speech_db - rng.uniform(10.0, 20.0))
    if rng.random() < 0.3:
        _unanswered(listen, stream, rng, pools, speech_db)
    listen = add_noise(listen, float(rng.uniform(10.0, 30.0)), rng)
    return Stream(listen, stream.speak, stream.labels, stream.sessions, stream.users)


def _unanswered(listen: np.ndarray, stream: Stream, rng: np.random.Generator, pools: SpeechPools, level: float) -> None:
    """Someone speaks in a long gap between sessions and is not answered (stays label 0)."""
    bounds = [(-1, -1), *stream.sessions, (stream.labels.size, stream.labels.size)]
    gaps = [(a[1] + 1, b[0] - 1) for a, b in itertools.pairwise(bounds) if b[0] - a[1] > 60]
    if not gaps:
        return
    g0, g1 = gaps[int(rng.integers(len(gaps)))]
    others = [s for s in sorted(pools.users) if s not in stream.users] or sorted(pools.users)
    x = _at_level(_turn(rng, pools.users[others[int(rng.integers(len(others)))]], 1.0, 3.0), level)
    room = (g1 - g0) * STEP_SAMPLES - x.size - 2 * SAMPLE_RATE
    if room <= 0:
        return
    a = g0 * STEP_SAMPLES + SAMPLE_RATE + int(rng.integers(room))
    listen[a : a + x.size] += x


def _speech_level(x: np.ndarray) -> float:
    frames = x[: x.size // STEP_SAMPLES * STEP_SAMPLES].reshape(-1, STEP_SAMPLES).astype(np.float64)
    p = np.mean(np.square(frames), axis=1)
    loud = p[p > 1e-7]
    return float(10 * np.log10(np.mean(loud))) if loud.size else -30.0


def make_pair(seed: int, pools: SpeechPools, cond: str = "runtime") -> tuple[Stream, Stream]:
    """(clean, noised) copies of stream number `seed` of condition `cond`."""
    if cond not in CONDITIONS:
        raise InputError(f"unknown stream condition {cond!r} (known: {', '.join(CONDITIONS)})")
    rng = np.random.default_rng([seed, list(CONDITIONS).index(cond)])
    clean = make_stream(rng, pools, cond)
    return clean, noised(clean, rng, pools)
