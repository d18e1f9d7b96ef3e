"""Audio tokenizers: one row of codes per 80 ms step, for the listening and speaking channels.

- `mimi`: Kyutai's Mimi codec (the `moshi` package), 8 codebooks of 2048 at 12.5 Hz: what
  a Moshi-style model consumes. Used only when `moshi` imports and its weights are a local
  file (`--mimi PATH`, EGOMEM_MIMI_WEIGHTS, or the Hugging Face cache): nothing downloads.
- `logmel`: built in, always available: a log-mel frame encoder, not a learned codec. Per
  step, 64 log-mel bands averaged over eight 10 ms frames; codebook 0 is the step's level
  (0.05 dB bins from -100 dB), codebooks 1-7 are 11-bit random-hyperplane hashes of the
  spectral shape (fixed seed). Same shape and cardinality as Mimi, so the builder, the
  Parquet schema and the Dataset run offline and unchanged; a model trained for real
  should use Mimi (or its own codec).
"""

from __future__ import annotations

import glob
import importlib.util
import os
from functools import cached_property
from pathlib import Path
from typing import Protocol

import numpy as np

from egomem.errors import InputError
from egomem.media import SAMPLE_RATE
from egomem.stream.clock import SAMPLES_PER_STEP

N_CODEBOOKS, CARDINALITY = 8, 2048
MIMI_FILE = "tokenizer-e351c8d8-checkpoint125.safetensors"  # the Mimi weights in Kyutai's releases


class AudioTokenizer(Protocol):
    name: str
    n_codebooks: int
    cardinality: int

    def encode(self, audio16k: np.ndarray) -> np.ndarray:
        """(len(audio16k) // 1280, n_codebooks) int16 codes, one row per 80 ms step."""
        ...


def _mel_filterbank(n_mels: int, n_fft: int, sr: int, fmin: float = 50.0, fmax: float = 7600.0) -> np.ndarray:
    def hz_to_mel(f: np.ndarray) -> np.ndarray:
        return 2595.0 * np.log10(1.0 + f / 700.0)

    mels = np.linspace(hz_to_mel(np.array(fmin)), hz_to_mel(np.array(fmax)), n_mels + 2)
    hz = 700.0 * (10 ** (mels / 2595.0) - 1.0)
    bins = np.fft.rfftfreq(n_fft, 1.0 / sr)
    fb = np.zeros((n_mels, bins.size), dtype=np.float32)
    for m in range(n_mels):
        lo, mid, hi = hz[m], hz[m + 1], hz[m + 2]
        fb[m] = np.clip(np.minimum((bins - lo) / (mid - lo), (hi - bins) / (hi - mid)), 0.0, None)
    return fb


class LogMelFrameTokenizer:
    name = "logmel"
    n_codebooks = N_CODEBOOKS
    cardinality = CARDINALITY
    n_mels, n_fft, hop = 64, 512, 160  # 10 ms hop: 8 frames per step

    @cached_property
    def _fb(self) -> np.ndarray:
        return _mel_filterbank(self.n_mels, self.n_fft, SAMPLE_RATE)

    @cached_property
    def _planes(self) -> np.ndarray:
        return np.random.default_rng(20250914).standard_normal((N_CODEBOOKS - 1, 11, self.n_mels)).astype(np.float32)

    def log_mel(self, audio16k: np.ndarray, chunk_steps: int = 512) -> np.ndarray:
        """(steps, 64) log-mel (dB) per 80 ms step, computed in chunks (a full stream's
        frames at once would take over 100 MB)."""
        steps = audio16k.size // SAMPLES_PER_STEP
        x = np.pad(audio16k[: steps * SAMPLES_PER_STEP].astype(np.float32), (0, self.n_fft))
        window = np.hanning(self.n_fft).astype(np.float32)
        out = np.zeros((steps, self.n_mels), dtype=np.float32)
        for a in range(0, steps, chunk_steps):
            n = min(chunk_steps, steps - a)
            idx = (a * 8 + np.arange(n * 8))[:, None] * self.hop + np.arange(self.n_fft)[None, :]
            power = np.abs(np.fft.rfft(x[idx] * window, axis=1)) ** 2 / self.n_fft
            db = 10.0 * np.log10(power.astype(np.float32) @ self._fb.T + 1e-10)
            out[a : a + n] = db.reshape(n, 8, self.n_mels).mean(axis=1)
        return out

    def encode(self, audio16k: np.ndarray) -> np.ndarray:
        lm = self.log_mel(audio16k)
        codes = np.zeros((lm.shape[0], N_CODEBOOKS), dtype=np.int16)
        level = lm.mean(axis=1)
        codes[:, 0] = np.clip(np.round((level + 100.0) / 0.05), 0, CARDINALITY - 1)
        shape = lm - level[:, None]
        bits = (np.einsum("kbm,sm->skb", self._planes, shape) > 0).astype(np.int64)  # (steps, 7, 11)
        codes[:, 1:] = (bits * (1 << np.arange(11))).sum(axis=2)
        return codes


def find_mimi_weights(explicit: Path | None = None) -> Path | None:
    """The local Mimi weights file: `explicit`, EGOMEM_MIMI_WEIGHTS, or the HF cache; None if absent."""
    for cand in (explicit, os.environ.get("EGOMEM_MIMI_WEIGHTS")):
        if cand:
            return Path(cand) if Path(cand).is_file() else None
    hub = Path(os.environ.get("HF_HUB_CACHE", Path.home() / ".cache" / "huggingface" / "hub"))
    hits = sorted(glob.glob(str(hub / "models--kyutai--*" / "snapshots" / "*" / MIMI_FILE)))
    return Path(hits[0]) if hits else None


def mimi_status(weights: Path | None = None) -> tuple[Path | None, str]:
    """(weights, why not) — weights is None when Mimi cannot be used here, with the reason."""
    if importlib.util.find_spec("moshi") is None:
        return None, "the `moshi` package is not installed"
    found = find_mimi_weights(weights)
    if found is None:
        where = weights or os.environ.get("EGOMEM_MIMI_WEIGHTS") or f"the Hugging Face cache ({MIMI_FILE})"
        return None, f"no Mimi weights at {where}"
    return found, ""


def make_audio_tokenizer(kind: str = "auto", mimi_weights: Path | None = None) -> tuple[AudioTokenizer, str]:
    """(tokenizer, note). `auto`: Mimi when usable here, else the log-mel encoder, the note saying why."""
    if kind not in ("auto", "mimi", "logmel"):
        raise InputError(f"audio tokenizer {kind!r}: expected auto, mimi or logmel")
    if kind == "logmel":
        return LogMelFrameTokenizer(), "log-mel frame encoder (asked for)"
    weights, why = mimi_status(mimi_weights)
    if weights is None:
        if kind == "mimi":
            raise InputError(f"the Mimi tokenizer cannot run here: {why}")
        return LogMelFrameTokenizer(), f"log-mel frame encoder: Mimi unavailable ({why})"
    from egomem_training.data.mimi import MimiTokenizer  # torch and moshi load only here

    return MimiTokenizer(weights), f"Mimi ({weights})"
