"""The content-addressed face/voice observation cache of bench identity: same input, same
observation as the product's encoder, computed once (also across instances, through the file)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from egomem.config import Config
from egomem.identity.types import VoiceObservation
from egomem.perception.face import FaceEncoder, load_image
from egomem_eval.identity.observation_cache import (
    CachedFaceEncoder,
    CachedVoiceEncoder,
    ObservationCache,
    content_key,
)


class CountingVoiceEncoder:
    """Plumbing mock of a voice encoder: counts calls; no speech in all-zero audio."""

    def __init__(self) -> None:
        self.calls = 0
        self.config = "inner config"

    def observe(self, audio: np.ndarray | None, sample_rate: int = 16000) -> VoiceObservation | None:
        self.calls += 1
        if audio is None or not np.any(audio):
            return None
        v = np.resize(audio, 256).astype(np.float32)
        return VoiceObservation(vector=v / np.linalg.norm(v), speech_s=audio.size / sample_rate)


def test_content_key_depends_on_bytes_shape_and_extra() -> None:
    a = np.arange(6, dtype=np.float32)
    assert content_key(a) == content_key(a.copy())
    assert content_key(a) != content_key(a.reshape(2, 3))
    assert content_key(a) != content_key(a + 1)
    assert content_key(a, 16000) != content_key(a, 8000)


def test_voice_observations_computed_once_and_kept_across_instances(tmp_path: Path) -> None:
    path = tmp_path / "voice.npz"
    inner = CountingVoiceEncoder()
    enc = CachedVoiceEncoder(inner, ObservationCache(path, 256, 1))
    audio = np.random.default_rng(0).standard_normal(16000).astype(np.float32)
    first = enc.observe(audio)
    again = enc.observe(audio.copy())
    assert inner.calls == 1
    assert first is not None and again is not None
    assert np.allclose(first.vector, again.vector) and again.speech_s == pytest.approx(1.0)
    assert enc.observe(np.zeros(8000, np.float32)) is None
    assert enc.observe(np.zeros(8000, np.float32)) is None  # "no speech" is cached too
    assert inner.calls == 2
    assert enc.observe(None) is None and inner.calls == 2
    assert enc.config == "inner config"  # everything but observe is the wrapped encoder's
    enc.cache.save()

    inner2 = CountingVoiceEncoder()
    enc2 = CachedVoiceEncoder(inner2, ObservationCache(path, 256, 1))
    third = enc2.observe(audio)
    assert inner2.calls == 0
    assert third is not None and np.allclose(third.vector, first.vector)
    assert enc2.observe(np.zeros(8000, np.float32)) is None and inner2.calls == 0


def test_face_observation_matches_the_product_encoder(tmp_path: Path, test_data: Path) -> None:
    cfg = Config()
    real = FaceEncoder(cfg.face)
    image = load_image(test_data / "faces" / "Colin_Powell" / "Colin_Powell_0001.jpg")
    direct = real.observe(image)
    assert direct is not None
    cache = ObservationCache(tmp_path / "face.npz", 128, 4)
    enc = CachedFaceEncoder(real, cache)
    a = enc.observe(image, frame_index=3)
    b = enc.observe(image.copy(), frame_index=5)
    assert cache.misses == 1 and cache.hits == 1
    for obs in (a, b):
        assert obs is not None
        assert np.allclose(obs.vector, direct.vector, atol=1e-6)
        assert obs.box == direct.box
    assert a is not None and b is not None and (a.frame_index, b.frame_index) == (3, 5)
    assert enc.observe(np.zeros((64, 64, 3), np.uint8)) is None  # no face
