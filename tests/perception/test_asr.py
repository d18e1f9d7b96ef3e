"""ASR backends: pocketsphinx on a real utterance, WER arithmetic, whisper's missing-model error
(Whisper itself: test_whisper.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from egomem.errors import ConfigError, InputError
from egomem.perception.asr import PocketSphinxASR, make_asr, normalise_text, wer, word_errors
from egomem.perception.audio import load_audio
from egomem.perception.whisper import FasterWhisperASR

EVAL = Path(__file__).resolve().parents[1] / "data" / "speech" / "eval"


def test_pocketsphinx_recognises_real_utterances() -> None:
    asr = PocketSphinxASR()
    rows = {r[1]: r[-1] for r in (line.split(",") for line in (EVAL / "manifest.csv").read_text().splitlines())}
    utts = ["2414-128291-0000", "367-130732-0009"]  # "what hath happened unto me", "serve in a chafing dish ..."
    hyps = [asr.transcribe(load_audio(EVAL / u.split("-")[0] / f"{u}.flac")) for u in utts]
    assert "happened" in hyps[0].split() and "chafing" in hyps[1].split()
    # test-other is LibriSpeech's hard half; pocketsphinx's small en-us model gets well under all-wrong.
    assert wer([rows[u] for u in utts], hyps) < 0.8


def test_silence_and_short_audio_give_empty_text() -> None:
    asr = PocketSphinxASR()
    assert asr.transcribe(np.zeros(16000, np.float32)) == ""
    assert asr.transcribe(np.zeros(10, np.float32)) == ""
    with pytest.raises(InputError):
        asr.transcribe(np.full(100, np.nan, np.float32))


def test_wer_arithmetic() -> None:
    assert word_errors("the cat sat", "the cat sat") == (0, 3)
    assert word_errors("the cat sat", "the bat sat down") == (2, 3)
    assert wer(["a b", "c d e f"], ["a", "c d e f"]) == pytest.approx(1 / 6)
    assert normalise_text("Don't STOP, now!") == "don't stop now"
    with pytest.raises(InputError):
        wer(["a"], [])


def test_whisper_without_a_local_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="never downloads"):
        FasterWhisperASR(tmp_path / "no-model")
    with pytest.raises(ConfigError, match="never downloads"):
        FasterWhisperASR("")
    with pytest.raises(ConfigError, match="not a Whisper model"):
        FasterWhisperASR("qwen2.5-coder-1.5b")
    with pytest.raises(InputError, match="unknown ASR backend"):
        make_asr("kaldi")
