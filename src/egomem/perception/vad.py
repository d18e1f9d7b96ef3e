"""Voice activity detection with Silero VAD, run from its ONNX file with onnxruntime.

The model ships inside the `silero-vad` wheel; we locate the file with importlib
rather than importing the package (which would import torch for nothing). Silero v5+
takes 512-sample windows at 16 kHz plus the previous 64 samples as context, and a
recurrent state, so windows are fed in order.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from egomem import weights
from egomem.errors import InputError
from egomem.perception.audio import SAMPLE_RATE

WINDOW = 512  # samples at 16 kHz = 32 ms
CONTEXT = 64


def silero_model_path() -> Path:
    package = weights.package_dir("silero_vad")
    if package is None:
        raise InputError("the silero-vad package is not installed")
    path = package / "data" / "silero_vad.onnx"
    if not path.is_file():
        raise InputError(f"silero VAD model not found at {path}")
    return path


@dataclass(frozen=True)
class Segment:
    start: float  # seconds
    end: float

    @property
    def duration(self) -> float:
        return self.end - self.start


class SileroVAD:
    """Thread-safe: one ONNX session; each call runs its own recurrent state."""

    frame_s = WINDOW / SAMPLE_RATE

    def __init__(self, model_path: Path | None = None) -> None:
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.inter_op_num_threads = 1
        opts.intra_op_num_threads = 1
        self._session = ort.InferenceSession(
            str(model_path or silero_model_path()), sess_options=opts, providers=["CPUExecutionProvider"]
        )
        self._lock = threading.Lock()

    def probabilities(self, audio: np.ndarray) -> np.ndarray:
        """Speech probability for each 32 ms window of 16 kHz mono audio."""
        a = np.asarray(audio, dtype=np.float32).reshape(-1)
        n = a.size // WINDOW
        if n == 0:
            return np.zeros(0, dtype=np.float32)
        return self.stream().feed(a[: n * WINDOW])

    def stream(self) -> VADStream:
        """A stateful detector for audio that arrives in pieces (the live stream)."""
        return VADStream(self)

    def _window(self, x: np.ndarray, state: np.ndarray) -> tuple[float, np.ndarray]:
        sr = np.array(SAMPLE_RATE, dtype=np.int64)
        with self._lock:
            prob, new_state = self._session.run(None, {"input": x, "state": state, "sr": sr})
        return float(prob[0, 0]), new_state

    def segments(
        self,
        audio: np.ndarray,
        *,
        threshold: float = 0.5,
        min_speech_s: float = 0.25,
        min_silence_s: float = 0.3,
        pad_s: float = 0.05,
    ) -> list[Segment]:
        """Speech segments with hysteresis (on at `threshold`, off below threshold - 0.15)."""
        probs = self.probabilities(audio)
        return segments_from_probs(
            probs, self.frame_s, threshold, min_speech_s, min_silence_s, pad_s, len(audio) / SAMPLE_RATE
        )


class VADStream:
    """Carries Silero's recurrent state and context across calls; buffers partial windows."""

    def __init__(self, vad: SileroVAD) -> None:
        self._vad = vad
        self._state = np.zeros((2, 1, 128), dtype=np.float32)
        self._context = np.zeros((1, CONTEXT), dtype=np.float32)
        self._pending = np.zeros(0, dtype=np.float32)

    def feed(self, audio: np.ndarray) -> np.ndarray:
        """Probabilities of every complete 32 ms window now available."""
        a = np.concatenate([self._pending, np.asarray(audio, dtype=np.float32).reshape(-1)])
        n = a.size // WINDOW
        out = np.empty(n, dtype=np.float32)
        for i in range(n):
            x = np.concatenate([self._context, a[i * WINDOW : (i + 1) * WINDOW][None, :]], axis=1)
            out[i], self._state = self._vad._window(x, self._state)
            self._context = x[:, -CONTEXT:]
        self._pending = a[n * WINDOW :]
        return out


def segments_from_probs(
    probs: np.ndarray,
    frame_s: float,
    threshold: float,
    min_speech_s: float,
    min_silence_s: float,
    pad_s: float,
    total_s: float,
) -> list[Segment]:
    off = max(threshold - 0.15, 0.01)
    segs: list[list[float]] = []
    start: float | None = None
    silence_since: float | None = None
    for i, p in enumerate(probs):
        t = i * frame_s
        if start is None:
            if p >= threshold:
                start, silence_since = t, None
        elif p < off:
            silence_since = t if silence_since is None else silence_since
            if t + frame_s - silence_since >= min_silence_s:
                segs.append([start, silence_since])
                start, silence_since = None, None
        else:
            silence_since = None
    if start is not None:
        segs.append([start, len(probs) * frame_s if silence_since is None else silence_since])
    out = []
    for s, e in segs:
        if e - s >= min_speech_s:
            out.append(Segment(max(0.0, s - pad_s), min(total_s, e + pad_s)))
    return out


def speech_only(audio: np.ndarray, segments: list[Segment]) -> np.ndarray:
    """Concatenate the speech segments of `audio` (16 kHz)."""
    parts = [audio[int(s.start * SAMPLE_RATE) : int(s.end * SAMPLE_RATE)] for s in segments]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)
