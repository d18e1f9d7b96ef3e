"""Face and voice observations cached by content, so that a bench that shows the product the same
photo or the same piece of audio many times embeds it once (across runs too).

`CachedFaceEncoder` / `CachedVoiceEncoder` wrap the product's encoders: `observe` returns exactly
what the wrapped encoder returned for the same input (keyed by a hash of the array's bytes, shape
and dtype, and by the encoder's config), everything else is the wrapped encoder's. `cache_models`
puts them into a `Models`, so the identifier the product builds from it uses them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from egomem.identity.types import FaceObservation, VoiceObservation
from egomem.media import SAMPLE_RATE
from egomem.runtime.models import Models


def content_key(array: Any, *extra: object) -> str:
    a = np.ascontiguousarray(np.asarray(array))
    h = hashlib.sha1(a.tobytes())
    h.update(repr((a.shape, str(a.dtype), extra)).encode())
    return h.hexdigest()


class ObservationCache:
    """key -> (vector or None, a few floats), saved as one .npz per encoder config."""

    def __init__(self, path: Path, dim: int, n_extra: int) -> None:
        self.path, self.dim, self.n_extra = path, dim, n_extra
        self.items: dict[str, tuple[np.ndarray | None, np.ndarray]] = {}
        self.dirty = 0
        self.hits = self.misses = 0
        if path.is_file():
            with np.load(path, allow_pickle=False) as z:
                for k, vec, ext in zip(z["keys"], z["vectors"], z["extra"], strict=True):
                    self.items[str(k)] = (None if np.isnan(vec).all() else vec.astype(np.float32), ext)

    @classmethod
    def for_config(cls, cache_dir: Path, kind: str, section: object, dim: int, n_extra: int) -> ObservationCache:
        key = hashlib.sha1(json.dumps(section, sort_keys=True, default=str).encode()).hexdigest()[:12]
        return cls(cache_dir / f"obs-{kind}-{key}.npz", dim, n_extra)

    def get(self, key: str) -> tuple[np.ndarray | None, np.ndarray] | None:
        got = self.items.get(key)
        if got is None:
            self.misses += 1
        else:
            self.hits += 1
        return got

    def put(self, key: str, vector: np.ndarray | None, extra: list[float]) -> None:
        self.items[key] = (None if vector is None else np.asarray(vector, np.float32), np.asarray(extra, np.float64))
        self.dirty += 1

    def save(self) -> None:
        if not self.dirty:
            return
        keys = sorted(self.items)
        blank = np.full(self.dim, np.nan, np.float32)
        vecs = np.stack([v if (v := self.items[k][0]) is not None else blank for k in keys]) if keys else blank[None]
        extra = np.stack([self.items[k][1] for k in keys]) if keys else np.zeros((1, self.n_extra))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, keys=np.array(keys or [""]), vectors=vecs, extra=extra)
        tmp.replace(self.path)
        self.dirty = 0


class CachedFaceEncoder:
    """The product's FaceEncoder with `observe` cached by the frame's content."""

    def __init__(self, inner: Any, cache: ObservationCache) -> None:
        self.inner, self.cache = inner, cache

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def observe(self, image: Any, *, bgr: bool = False, frame_index: int = 0) -> FaceObservation | None:
        key = content_key(image, bgr)
        got = self.cache.get(key)
        if got is None:
            obs = self.inner.observe(image, bgr=bgr, frame_index=frame_index)
            box = [float(x) for x in obs.box] if obs is not None else [0.0] * 4
            self.cache.put(key, None if obs is None else obs.vector, box)
            return obs
        vec, saved = got
        if vec is None:
            return None
        top, right, bottom, left = (int(x) for x in saved)
        return FaceObservation(vector=vec, box=(top, right, bottom, left), frame_index=frame_index)


class CachedVoiceEncoder:
    """The product's VoiceEncoder with `observe` cached by the audio's content."""

    def __init__(self, inner: Any, cache: ObservationCache) -> None:
        self.inner, self.cache = inner, cache

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def observe(self, audio: np.ndarray | None, sample_rate: int = SAMPLE_RATE) -> VoiceObservation | None:
        if audio is None:
            return None
        key = content_key(audio, sample_rate)
        got = self.cache.get(key)
        if got is None:
            obs = self.inner.observe(audio, sample_rate)
            self.cache.put(key, None if obs is None else obs.vector, [0.0 if obs is None else obs.speech_s])
            return obs
        vec, extra = got
        return None if vec is None else VoiceObservation(vector=vec, speech_s=float(extra[0]))


def cache_models(models: Models, cache_dir: Path) -> tuple[ObservationCache, ObservationCache]:
    """Wrap `models`' face and voice encoders with caches under `cache_dir` (returned, to save)."""
    cfg = models.config
    face = ObservationCache.for_config(cache_dir, "face", cfg.face.model_dump(), 128, 4)
    voice = ObservationCache.for_config(cache_dir, "voice", cfg.voice.model_dump(), 256, 1)
    inner_face, inner_voice = models.face, models.voice
    models.face = CachedFaceEncoder(inner_face, face)
    models.voice = CachedVoiceEncoder(inner_voice, voice)
    return face, voice
