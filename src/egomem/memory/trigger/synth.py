"""Synthetic two-channel dialog streams made from real speech, with exact step labels.

A stream has 1-4 user sessions. A session is several user turns, each answered by the
assistant on the speaking channel; with p=0.3 the user interrupts the assistant (the
assistant stops soon after). Consecutive sessions are by different users when the gap
between them is short (0.2-1 s), so only a voice change separates them. The session
span runs from the user's first speech to the end of the session's last turn.

The noised copy of a stream adds (as in the paper): microphone echo of the speaking
channel (p=0.3, gain 0-0.2, delay 0.1-0.5 s), other people's speech in the background
(p=0.5) and, in a long gap, an utterance nobody answers (p=0.3, label 0), and white
noise at 10-30 dB SNR.

Speaker split: training users are the 40 LibriSpeech train-clean-100 speakers; held-out
users are the LibriSpeech test-other speakers except 3080, whose voice is the assistant
in both splits (an assistant has one fixed voice). Background speech: pyannote meeting
excerpts trn* and FSDD george/jackson/lucas for training; tst*/dev*/sample and FSDD
nicolas/theo/yweweler for evaluation.
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
from egomem.perception.audio import SAMPLE_RATE, add_noise, load_audio
from egomem.perception.vad import Segment, SileroVAD

Split = Literal["train", "eval"]
ASSISTANT_SPEAKER = "3080"
NO_DIALOG, START, IN_SESSION, END = 0, 1, 2, 3


@dataclass
class Utterance:
    audio: np.ndarray
    segments: list[Segment]  # speech segments, so turns start and end on speech


@dataclass
class SpeechPools:
    users: dict[str, list[Utterance]]
    assistant: list[Utterance]
    background: list[np.ndarray]


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


def load_pools(data_dir: Path, split: Split, vad: SileroVAD | None = None, max_utts: int = 0) -> SpeechPools:
    """Read the speech of `split` from ../shared/data (see the module docstring for the split).

    `max_utts` > 0 keeps only that many utterances per speaker (quick runs)."""
    vad = vad or SileroVAD()
    other = data_dir / "speech_librispeech_test_other_10spk"
    train = data_dir / "speech_librispeech_train_clean_100_1utt"
    meetings = data_dir / "speech_pyannote_diarization"
    fsdd = data_dir / "speech_fsdd_subset"
    for d in (other, train, meetings, fsdd):
        if not d.is_dir():
            raise InputError(f"speech data folder not found: {d}")
    users: dict[str, list[Utterance]] = {}
    assistant: list[Utterance] = []
    with open(other / "manifest.csv", newline="") as f:
        for row in csv.DictReader(f):
            spk = row["speaker_id"]
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
    else:
        wavs = sorted((meetings / "debug_meetings").glob("tst*.wav")) + sorted(
            (meetings / "debug_meetings").glob("dev*.wav")
        )
        wavs.append(meetings / "sample" / "sample.wav")
        fsdd_speakers = ("nicolas", "theo", "yweweler")
    if max_utts > 0:  # quick runs: one recording of each kind of background speech
        wavs, fsdd_speakers = wavs[:1], fsdd_speakers[:1]
    background = [load_audio(p) for p in wavs]
    for spk in fsdd_speakers:
        clips = [load_audio(p) for p in sorted((fsdd / "recordings").glob(f"*_{spk}_*.wav"))]
        gap = np.zeros(int(0.3 * SAMPLE_RATE), dtype=np.float32)
        background.append(np.concatenate([x for c in clips for x in (c, gap)]))
    if max_utts > 0:
        users = {k: v[:max_utts] for k, v in users.items()}
        assistant = assistant[: max(max_utts, 3)]
    return SpeechPools(users, assistant, background)


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


def make_stream(rng: np.random.Generator, pools: SpeechPools) -> Stream:
    """One clean stream (see the module docstring)."""
    tr = _Tracks()
    speakers = sorted(pools.users)
    t = rng.uniform(0.5, 5.0)
    spans: list[tuple[float, float]] = []
    who: list[str] = []
    prev: str | None = None
    short_gap = False
    for _ in range(int(rng.integers(1, 5))):
        choices = [s for s in speakers if not (short_gap and s == prev)]
        user = choices[int(rng.integers(len(choices)))]
        level = rng.uniform(-32.0, -20.0)
        start = t
        n_turns = int(rng.integers(1, 5))
        for k in range(n_turns):
            t = tr.add("listen", t, _at_level(_turn(rng, pools.users[user], 1.0, 6.0), level))
            a_start = t + rng.uniform(0.2, 1.0)
            reply = _at_level(_turn(rng, pools.assistant, 1.0, 5.0), rng.uniform(-26.0, -22.0))
            reply_s = reply.size / SAMPLE_RATE
            if k + 1 < n_turns and rng.random() < 0.3 and reply_s > 1.0:
                # The user barges in; the assistant stops 0.1-0.4 s later.
                next_t = a_start + rng.uniform(0.5, reply_s - 0.3)
                cut = min(reply.size, int((next_t - a_start + rng.uniform(0.1, 0.4)) * SAMPLE_RATE))
                reply = reply[:cut] * np.linspace(1, 0, cut).astype(np.float32) ** 0.3
                end = tr.add("speak", a_start, reply)
                t = next_t
            else:
                end = tr.add("speak", a_start, reply)
                t = end + rng.uniform(0.3, 1.5)
        spans.append((start, end))
        who.append(user)
        prev = user
        short_gap = rng.random() < 0.35
        t = end + (rng.uniform(0.2, 1.0) if short_gap else rng.uniform(2.5, 10.0))
    total = spans[-1][1] + rng.uniform(0.5, 4.0)
    n = int(total / STEP_S) * int(STEP_S * SAMPLE_RATE)
    listen, speak = np.pad(tr.listen, (0, max(0, n - tr.listen.size)))[:n], np.pad(tr.speak, (0, n))[:n]
    steps = n // int(STEP_S * SAMPLE_RATE)
    labels = np.zeros(steps, dtype=np.int8)
    sessions = []
    for s, e in spans:
        a, b = int(s / STEP_S), min(int(e / STEP_S), steps - 1)
        labels[a : b + 1] = IN_SESSION
        labels[a], labels[b] = START, END
        sessions.append((a, b))
    return Stream(listen, speak, labels, sessions, who)


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
    room = (g1 - g0) * int(STEP_S * SAMPLE_RATE) - x.size - 2 * SAMPLE_RATE
    if room <= 0:
        return
    a = g0 * int(STEP_S * SAMPLE_RATE) + SAMPLE_RATE + int(rng.integers(room))
    listen[a : a + x.size] += x


def _speech_level(x: np.ndarray) -> float:
    frames = x[: x.size // 1280 * 1280].reshape(-1, 1280).astype(np.float64)
    p = np.mean(np.square(frames), axis=1)
    loud = p[p > 1e-7]
    return float(10 * np.log10(np.mean(loud))) if loud.size else -30.0


def make_pair(seed: int, pools: SpeechPools) -> tuple[Stream, Stream]:
    """(clean, noised) copies of stream number `seed`."""
    rng = np.random.default_rng(seed)
    clean = make_stream(rng, pools)
    return clean, noised(clean, rng, pools)
