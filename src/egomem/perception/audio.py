"""Audio helpers of perception: levels and noise. Decoding and resampling live in
egomem.media (below the stream layer); they are re-exported here for perception's users.
"""

from __future__ import annotations

import numpy as np

from egomem.media import SAMPLE_RATE, load_audio, to_mono16k

__all__ = ["SAMPLE_RATE", "add_noise", "load_audio", "rms_db", "to_mono16k"]


def rms_db(audio: np.ndarray) -> float:
    """Level in dBFS (-inf for silence)."""
    if audio.size == 0:
        return float("-inf")
    rms = float(np.sqrt(np.mean(np.square(audio, dtype=np.float64))))
    return 20 * np.log10(rms) if rms > 0 else float("-inf")


def add_noise(audio: np.ndarray, snr_db: float, rng: np.random.Generator) -> np.ndarray:
    """White Gaussian noise at a given SNR relative to the signal power (benchmarks, augmentation)."""
    power = float(np.mean(np.square(audio, dtype=np.float64))) or 1e-12
    noise = rng.standard_normal(audio.size) * np.sqrt(power / (10 ** (snr_db / 10)))
    return np.clip(audio + noise, -1, 1).astype(np.float32)
