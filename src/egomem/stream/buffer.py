"""Bounded ring buffers of the listening channel, the speaking channel and video.

Times are stream seconds (0 at stream start). Audio is 16 kHz mono float32. The
buffers are written by the source thread and read by the processes, so every
method takes the buffer's lock; reads return copies.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass

import numpy as np

from egomem.media import SAMPLE_RATE


class AudioRing:
    """The last `capacity_s` seconds of one audio channel, addressed by stream time."""

    def __init__(self, capacity_s: float) -> None:
        self._cap = int(capacity_s * SAMPLE_RATE)
        self._buf = np.zeros(self._cap, dtype=np.float32)
        self._written = 0  # total samples ever appended
        self._lock = threading.Lock()

    @property
    def end_s(self) -> float:
        return self._written / SAMPLE_RATE

    def append(self, samples: np.ndarray) -> None:
        x = np.asarray(samples, dtype=np.float32).reshape(-1)
        with self._lock:
            if x.size >= self._cap:
                self._buf[:] = x[-self._cap :]
            else:
                start = self._written % self._cap
                first = min(x.size, self._cap - start)
                self._buf[start : start + first] = x[:first]
                self._buf[: x.size - first] = x[first:]
            self._written += x.size

    def window(self, t0: float, t1: float) -> np.ndarray:
        """Samples in [t0, t1), clipped to what the ring still holds."""
        with self._lock:
            lo = max(round(t0 * SAMPLE_RATE), self._written - self._cap, 0)
            hi = min(round(t1 * SAMPLE_RATE), self._written)
            if hi <= lo:
                return np.zeros(0, dtype=np.float32)
            idx = np.arange(lo, hi) % self._cap
            return self._buf[idx].copy()

    def last(self, seconds: float) -> np.ndarray:
        end = self.end_s
        return self.window(end - seconds, end)


@dataclass(frozen=True)
class Frame:
    t: float
    image: np.ndarray  # RGB uint8, H x W x 3


class FrameRing:
    """The most recent video frames (bounded count)."""

    def __init__(self, max_frames: int) -> None:
        self._frames: deque[Frame] = deque(maxlen=max_frames)
        self._lock = threading.Lock()

    def append(self, frame: Frame) -> None:
        with self._lock:
            self._frames.append(frame)

    def since(self, t0: float) -> list[Frame]:
        with self._lock:
            return [f for f in self._frames if f.t >= t0]

    def latest(self, n: int = 1) -> list[Frame]:
        with self._lock:
            return list(self._frames)[-n:]


class StreamBuffer:
    """Everything the processes read: listening audio, speaking audio, video frames,
    and the assistant's own text (what it said, with stream times)."""

    def __init__(self, capacity_s: float = 60.0, max_frames: int = 64) -> None:
        self.listen = AudioRing(capacity_s)
        self.speak = AudioRing(capacity_s)
        self.video = FrameRing(max_frames)
        self._text: deque[tuple[float, str]] = deque(maxlen=4096)
        self._lock = threading.Lock()

    def add_assistant_text(self, t: float, text: str) -> None:
        with self._lock:
            self._text.append((t, text))

    def assistant_text(self, t0: float, t1: float) -> str:
        with self._lock:
            return " ".join(s for t, s in self._text if t0 <= t < t1).strip()

    @property
    def now_s(self) -> float:
        return self.listen.end_s
