"""Voice pipeline on real LibriSpeech samples, and odd audio."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.signal import resample_poly

from egomem.errors import InputError
from egomem.perception.audio import add_noise, load_audio
from egomem.perception.voice import VoiceEncoder, estimate_snr_db

EVAL = Path(__file__).resolve().parents[1] / "data" / "speech" / "eval"


@pytest.fixture(scope="module")
def enc() -> VoiceEncoder:
    return VoiceEncoder()


@pytest.fixture(scope="module")
def clips() -> dict[str, np.ndarray]:
    return {p.stem: load_audio(p) for p in sorted(EVAL.glob("*/*.flac"))}


def _vec(enc: VoiceEncoder, a: np.ndarray, sr: int = 16000) -> np.ndarray:
    obs = enc.observe(a, sr)
    assert obs is not None
    assert obs.vector.shape == (256,)
    assert abs(float(np.linalg.norm(obs.vector)) - 1.0) < 1e-4
    return obs.vector


def test_same_speaker_closer_than_different(enc: VoiceEncoder, clips: dict[str, np.ndarray]) -> None:
    a1, a2 = _vec(enc, clips["2414-128291-0000"]), _vec(enc, clips["2414-128291-0003"])
    b1 = _vec(enc, clips["367-130732-0000"])
    assert a1 @ a2 > a1 @ b1 + 0.1
    assert a1 @ a2 > a2 @ b1 + 0.1


def test_noisy_query_still_nearest_its_speaker(enc: VoiceEncoder, clips: dict[str, np.ndarray]) -> None:
    rng = np.random.default_rng(0)
    a1, b1 = _vec(enc, clips["2414-128291-0000"]), _vec(enc, clips["367-130732-0000"])
    noisy = add_noise(clips["2414-128291-0003"], 10.0, rng)
    assert 5.0 < estimate_snr_db(noisy) < 15.0
    q = _vec(enc, noisy)
    assert q @ a1 > q @ b1


def test_stereo_8k_float64_int16_are_accepted(enc: VoiceEncoder, clips: dict[str, np.ndarray]) -> None:
    a = clips["367-130732-0009"]
    ref = _vec(enc, a)
    stereo = np.stack([a, a], axis=1).astype(np.float64)
    assert _vec(enc, stereo) @ ref > 0.99
    assert _vec(enc, (a * 32000).astype(np.int16)) @ ref > 0.99
    other = _vec(enc, clips["2414-128291-0000"])
    v8 = _vec(enc, resample_poly(a, 1, 2), 8000)  # telephone-rate copy, resampled back to 16 kHz inside
    assert v8 @ ref > 0.5 and v8 @ ref > v8 @ other


def test_silence_noise_and_too_short_are_no_speech(enc: VoiceEncoder, clips: dict[str, np.ndarray]) -> None:
    rng = np.random.default_rng(1)
    assert enc.observe(np.zeros(32000, np.float32)) is None
    assert enc.observe(np.zeros(0, np.float32)) is None
    assert enc.observe(None) is None
    assert enc.observe((rng.standard_normal(32000) * 0.05).astype(np.float32)) is None
    assert enc.observe(clips["367-130732-0000"][:4000]) is None  # 0.25 s < min_speech_s


def test_nan_and_bad_shapes_raise(enc: VoiceEncoder) -> None:
    x = np.zeros(16000, np.float32)
    x[5] = np.nan
    with pytest.raises(InputError):
        enc.observe(x)
    with pytest.raises(InputError):
        enc.observe(np.zeros((2, 2, 2), np.float32))
    with pytest.raises(InputError):
        enc.observe(np.zeros(100, np.float32), 0)
