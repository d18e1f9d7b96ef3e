"""Media in: any audio file or array to 16 kHz mono float32 in [-1, 1], or a clear InputError.

Every audio path of egomem goes through `to_mono16k`, so odd inputs (stereo, 8 kHz,
int16, float64, NaN) are handled once, here. A neutral module below every layer: the
stream (ring buffers, recordings) and perception both read audio through it.
"""

from __future__ import annotations

from math import gcd
from pathlib import Path

import numpy as np
from scipy.signal import resample_poly

from egomem.errors import InputError

SAMPLE_RATE = 16_000


def to_mono16k(samples: np.ndarray, sample_rate: int) -> np.ndarray:
    """Convert an array (frames x channels, or 1-d) at `sample_rate` to 16 kHz mono float32."""
    a = np.asarray(samples)
    if sample_rate <= 0:
        raise InputError(f"invalid sample rate {sample_rate}")
    if a.ndim == 2:
        # soundfile gives (frames, channels); accept (channels, frames) when it is clearly so.
        if a.shape[0] <= 8 and a.shape[1] > a.shape[0]:
            a = a.T
        a = a.astype(np.float64).mean(axis=1) if np.issubdtype(a.dtype, np.floating) else _int_to_float(a).mean(axis=1)
    elif a.ndim != 1:
        raise InputError(f"audio must be 1-d or 2-d, got shape {a.shape}")
    if np.issubdtype(a.dtype, np.integer):
        a = _int_to_float(a)
    elif not np.issubdtype(a.dtype, np.floating):
        raise InputError(f"unsupported audio sample type {a.dtype}")
    a = a.astype(np.float64, copy=False)
    if a.size and not np.all(np.isfinite(a)):
        raise InputError("audio contains NaN or infinite samples")
    if sample_rate != SAMPLE_RATE and a.size:
        g = gcd(int(sample_rate), SAMPLE_RATE)
        a = resample_poly(a, SAMPLE_RATE // g, int(sample_rate) // g)
    return np.clip(a, -1.0, 1.0).astype(np.float32)


def _int_to_float(a: np.ndarray) -> np.ndarray:
    info = np.iinfo(a.dtype)
    if info.min == 0:  # unsigned (8-bit WAV): centre first
        return (a.astype(np.float64) - (info.max + 1) / 2) / ((info.max + 1) / 2)
    return a.astype(np.float64) / max(abs(info.min), info.max)


def load_audio(path: str | Path) -> np.ndarray:
    """Read an audio file (wav/flac/ogg via libsndfile, anything else via PyAV) as 16 kHz mono."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"audio file not found: {p}")
    import soundfile as sf

    try:
        data, sr = sf.read(str(p), always_2d=False, dtype="float32")
        return to_mono16k(data, int(sr))
    except sf.LibsndfileError:
        pass  # not a libsndfile format: try FFmpeg
    return _load_with_av(p)


def _load_with_av(p: Path) -> np.ndarray:
    import av

    try:
        with av.open(str(p)) as container:
            if not container.streams.audio:
                raise InputError(f"{p.name} has no audio track")
            resampler = av.AudioResampler(format="flt", layout="mono", rate=SAMPLE_RATE)
            chunks = []
            for frame in container.decode(audio=0):
                for out in resampler.resample(frame):
                    chunks.append(out.to_ndarray().reshape(-1))
            for out in resampler.resample(None):
                chunks.append(out.to_ndarray().reshape(-1))
    except av.error.FFmpegError as exc:
        raise InputError(f"cannot decode audio from {p.name}: {exc}") from exc
    if not chunks:
        return np.zeros(0, dtype=np.float32)
    return to_mono16k(np.concatenate(chunks), SAMPLE_RATE)
