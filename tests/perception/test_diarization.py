"""Diarization on real voices (LibriSpeech test-other speakers 2414 and 367, tests/data/speech)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from egomem.perception.audio import load_audio
from egomem.perception.diarization import (
    FRAME_S,
    Diarization,
    DiarizationConfig,
    Diarizer,
    OnlineDiarizer,
    Turn,
    map_to_users,
    merge_short_turns,
    viterbi,
    window_spans,
)
from egomem.perception.vad import Segment

EVAL = Path(__file__).resolve().parents[1] / "data" / "speech" / "eval"
SR = 16000
GAP = np.zeros(int(0.3 * SR), np.float32)


@pytest.fixture(scope="module")
def diarizer() -> Diarizer:
    return Diarizer()


def _voice(speaker: str) -> np.ndarray:
    parts = []
    for p in sorted((EVAL / speaker).glob("*.flac")):
        parts += [load_audio(p), GAP]
    return np.concatenate(parts)


@pytest.fixture(scope="module")
def two_voices() -> tuple[np.ndarray, float]:
    a, b = _voice("2414"), _voice("367")
    return np.concatenate([a, b]), a.size / SR


def _labels(d: Diarization, total_s: float) -> np.ndarray:
    lab = np.full(int(np.ceil(total_s / FRAME_S)), -1)
    for t in d.turns:
        lab[round(t.start / FRAME_S) : round(t.end / FRAME_S)] = t.speaker
    return lab


def test_two_voices_two_clusters_with_the_change_in_place(diarizer: Diarizer, two_voices) -> None:
    audio, change = two_voices
    d = diarizer.diarize(audio)
    assert d.speakers == 2
    assert d.centroids.shape == (2, 256)
    first = {t.speaker for t in d.turns if t.end <= change - 0.5}
    second = {t.speaker for t in d.turns if t.start >= change + 0.5}
    assert len(first) == 1 and len(second) == 1 and first != second
    # Neither voice is output more than 0.3 s on the wrong side of the change, and the first voice's
    # last turn ends within 1 s before it (its recording's own trailing pause plus the 0.3 s gap).
    (s1,), (s2,) = first, second
    last_a = max(t.end for t in d.turns if t.speaker == s1)
    first_b = min(t.start for t in d.turns if t.speaker == s2)
    assert change - 1.0 < last_a < change + 0.3
    assert change - 0.3 < first_b < change + 0.6
    # Most speech is attributed: the clustered turns cover the VAD's speech.
    assert sum(t.duration for t in d.turns) > 0.8 * sum(s.duration for s in d.speech)


def test_one_voice_one_cluster(diarizer: Diarizer) -> None:
    d = diarizer.diarize(_voice("2414"))
    assert d.speakers == 1
    assert d.turns and all(t.speaker == 0 for t in d.turns)


@pytest.mark.parametrize("audio", [None, np.zeros(0, np.float32), np.zeros(3 * SR, np.float32)])
def test_silence_or_nothing_is_an_empty_result(diarizer: Diarizer, audio) -> None:
    d = diarizer.diarize(audio)
    assert d.turns == [] and d.speakers == 0


def test_quiet_noise_is_no_speaker(diarizer: Diarizer) -> None:
    noise = np.random.default_rng(0).normal(0, 0.003, 4 * SR).astype(np.float32)
    assert diarizer.diarize(noise).speakers == 0


def test_online_agrees_with_offline(diarizer: Diarizer, two_voices) -> None:
    audio, _ = two_voices
    offline = diarizer.diarize(audio)
    online = OnlineDiarizer(diarizer)
    chunk = int(0.5 * SR)
    for i in range(0, audio.size, chunk):
        online.feed(audio[i : i + chunk])
    res = online.result()
    assert res.speakers == 2
    assert online.delay_s <= 2.0
    total = audio.size / SR
    a, b = _labels(offline, total), _labels(res, total)
    both = (a >= 0) & (b >= 0)
    assert both.sum() > 0.6 * (a >= 0).sum()
    # Same partition up to renaming: the best one-to-one mapping explains most shared frames.
    agree = max(np.mean(a[both] == b[both]), np.mean(a[both] == 1 - b[both]))
    assert agree > 0.9


def test_online_one_voice_stays_one(diarizer: Diarizer) -> None:
    online = OnlineDiarizer(diarizer)
    audio = _voice("367")
    for i in range(0, audio.size, SR):
        online.feed(audio[i : i + SR])
    assert online.result().speakers == 1


def test_map_to_users_uses_the_callers_lookup() -> None:
    cents = np.eye(3, 4, dtype=np.float32)
    keys = {"ann": np.array([1, 0, 0, 0], np.float32), "ben": np.array([0, 0, 1, 0], np.float32)}

    def lookup(v: np.ndarray) -> tuple[str, float] | None:
        best = max(keys, key=lambda k: float(keys[k] @ v))
        s = float(keys[best] @ v)
        return (best, s) if s > 0.5 else None

    assert map_to_users(cents, lookup) == {0: "ann", 2: "ben"}
    assert map_to_users(np.zeros((0, 4), np.float32), lookup) == {}


def test_window_spans_cover_each_region() -> None:
    spans = window_spans([Segment(1.0, 4.2), Segment(5.0, 5.8), Segment(6.0, 6.1)], 1.5, 0.5, 0.3)
    assert spans[0] == (1.0, 2.5) and spans[-2][1] == pytest.approx(4.2)
    assert spans[-1] == (5.0, 5.8)  # short region: one window; the 0.1 s one: none
    with pytest.raises(Exception, match="positive"):
        window_spans([Segment(0, 1)], 0.0, 0.5, 0.3)


def test_viterbi_penalty_removes_a_blip_but_keeps_a_real_change() -> None:
    s = np.zeros((40, 2))
    s[:20, 0], s[20:, 1] = 1.0, 1.0
    s[8, :] = [0.0, 1.0]  # one-frame blip
    assert viterbi(s, 0.0)[8] == 1
    path = viterbi(s, 1.5)
    assert path[8] == 0 and path[0] == 0 and path[-1] == 1


def test_short_turns_join_their_neighbour() -> None:
    turns = [Turn(0.0, 2.0, 0), Turn(2.0, 2.1, 1), Turn(2.1, 4.0, 0), Turn(5.0, 6.0, 1)]
    assert merge_short_turns(turns, 0.3) == [Turn(0.0, 4.0, 0), Turn(5.0, 6.0, 1)]


def test_single_speaker_config_labels_all_speech_one(diarizer: Diarizer, two_voices) -> None:
    d = diarizer.with_config(DiarizationConfig(method="single")).diarize(two_voices[0])
    assert d.speakers == 1 and len(d.turns) >= 2
