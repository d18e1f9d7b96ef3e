"""Splitting one user turn at speaker changes (perception.diarization.TurnSplitter), on real voices:
LibriSpeech test-other speakers 2414 and 367 (tests/data/speech/eval), joined with no gap."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from egomem.config import RuntimeConfig
from egomem.perception.audio import load_audio
from egomem.perception.diarization import Diarizer, Turn, TurnSplitter, pieces_from_turns

EVAL = Path(__file__).resolve().parents[1] / "data" / "speech" / "eval"
SR = 16000


@pytest.fixture(scope="module")
def splitter() -> TurnSplitter:
    defaults = RuntimeConfig()
    assert defaults.turn_split_threshold is not None
    return TurnSplitter(Diarizer(), threshold=defaults.turn_split_threshold, min_piece_s=defaults.turn_split_min_s)


def _speech(speaker: str, index: int, max_s: float = 7.0) -> np.ndarray:
    """One utterance with its leading and trailing silence cut (a turn change with no pause)."""
    a = load_audio(sorted((EVAL / speaker).glob("*.flac"))[index])
    loud = np.flatnonzero(np.abs(a) > 0.02 * float(np.max(np.abs(a))))
    return a[loud[0] : loud[-1] + 1][: int(max_s * SR)]


def test_two_speakers_with_no_gap_are_cut_near_the_change(splitter: TurnSplitter) -> None:
    a, b = _speech("2414", 0), _speech("367", 0)
    pieces = splitter.split(np.concatenate([a, b]))
    change = a.size / SR
    assert len(pieces) == 2, pieces
    assert abs(pieces[1][0] - change) <= 0.75, (pieces, change)
    assert pieces[0][0] == 0.0 and pieces[-1][1] == pytest.approx((a.size + b.size) / SR)


def test_one_speaker_is_not_cut(splitter: TurnSplitter) -> None:
    for speaker in ("2414", "367"):
        audio = np.concatenate([_speech(speaker, 0), _speech(speaker, 1)])
        assert splitter.split(audio) == [(0.0, audio.size / SR)]


def test_short_silent_or_empty_turns_are_one_piece_or_none(splitter: TurnSplitter) -> None:
    short = _speech("2414", 0)[: int(2.5 * SR)]
    assert splitter.split(short) == [(0.0, short.size / SR)]
    assert splitter.split(np.zeros(5 * SR, np.float32)) == [(0.0, 5.0)]
    assert splitter.split(np.zeros(0, np.float32)) == []


def test_pieces_cover_the_turn_and_short_ones_join_a_neighbour() -> None:
    turns = [Turn(0.0, 4.0, 0), Turn(4.0, 4.5, 1), Turn(4.5, 9.0, 0), Turn(9.2, 12.0, 1)]
    assert pieces_from_turns(turns, 12.5, 1.6) == [(0.0, pytest.approx(9.1)), (pytest.approx(9.1), 12.5)]
    assert pieces_from_turns([Turn(0.5, 3.0, 0)], 3.5, 1.6) == [(0.0, 3.5)]
    assert pieces_from_turns([Turn(0.0, 1.0, 0), Turn(1.0, 6.0, 1)], 6.0, 1.6) == [(0.0, 6.0)]
