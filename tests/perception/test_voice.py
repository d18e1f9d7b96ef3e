"""Voice pipeline on real LibriSpeech samples, and odd audio."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.signal import resample_poly

from egomem.config import VoiceConfig
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
    assert enc.observe(np.zeros(1600, np.float32)) is None  # 0.1 s of silence


def _short(enc: VoiceEncoder, audio: np.ndarray, seconds: float) -> np.ndarray:
    """`seconds` of speech from the first speech region, with 0.3 s of silence either side (a poll window)."""
    seg = enc.vad.segments(audio, min_speech_s=0.1, min_silence_s=0.1, pad_s=0.0)[0]
    start = int(seg.start * 16000)
    pad = np.zeros(4800, np.float32)
    return np.concatenate([pad, audio[start : start + int(seconds * 16000)], pad])


def test_short_speech_gets_a_voice_of_its_speaker(enc: VoiceEncoder, clips: dict[str, np.ndarray]) -> None:
    a_long, b_long = _vec(enc, clips["2414-128291-0000"]), _vec(enc, clips["367-130732-0000"])
    for seconds in (0.45, 0.9):  # under the old 0.5 s minimum, and under one resemblyzer window
        a_short = enc.observe(_short(enc, clips["2414-128291-0003"], seconds))
        b_short = enc.observe(_short(enc, clips["367-130732-0009"], seconds))
        assert a_short is not None and b_short is not None
        assert 0.3 <= a_short.speech_s < 1.6 and abs(float(np.linalg.norm(a_short.vector)) - 1.0) < 1e-4
        assert a_short.vector @ a_long > a_short.vector @ b_long
        assert b_short.vector @ b_long > b_short.vector @ a_long


def test_short_speech_is_repeated_to_fill_the_window_not_zero_padded(
    enc: VoiceEncoder, clips: dict[str, np.ndarray]
) -> None:
    x = _short(enc, clips["2414-128291-0003"], 0.6)[4800:-4800]
    repeat = VoiceEncoder(VoiceConfig(short_embedding="repeat"), vad=enc.vad)
    repeat._model = enc._encoder()
    pad = VoiceEncoder(VoiceConfig(short_embedding="pad"), vad=enc.vad)
    pad._model = enc._encoder()
    v_repeat, v_pad = repeat.embed_speech(x), pad.embed_speech(x)
    # The same as embedding the piece tiled over one 1.6 s window, and not resemblyzer's zero padding.
    assert float(v_repeat @ pad.embed_speech(np.tile(x, 3))) > 0.999
    assert float(v_repeat @ v_pad) < 0.999


def test_nan_and_bad_shapes_raise(enc: VoiceEncoder) -> None:
    x = np.zeros(16000, np.float32)
    x[5] = np.nan
    with pytest.raises(InputError):
        enc.observe(x)
    with pytest.raises(InputError):
        enc.observe(np.zeros((2, 2, 2), np.float32))
    with pytest.raises(InputError):
        enc.observe(np.zeros(100, np.float32), 0)
