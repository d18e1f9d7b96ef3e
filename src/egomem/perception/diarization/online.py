"""Online diarization with a bounded delay, for the live loop."""

from __future__ import annotations

import numpy as np

from egomem.media import SAMPLE_RATE, to_mono16k
from egomem.perception.diarization.offline import Diarizer
from egomem.perception.diarization.types import Diarization, Turn
from egomem.perception.vad import Segment


class OnlineDiarizer:
    """Incremental diarization.

    Audio arrives in pieces of any length. Every `hop_s` of audio, the last `window_s` is
    embedded (the same embedding as offline) when the VAD marks at least half of it as speech,
    and assigned to the nearest cluster centroid within `online_threshold` cosine distance (the
    centroid then moves to the running mean) or opens a new cluster. The window's label goes
    to the speech frames of its central hop, so a frame's label is final `delay_s` =
    window_s / 2 + hop_s after it was heard (1.25 s by default); it is never revised.
    Memory grows with the audio held (`max_history_s` bounds it)."""

    def __init__(self, diarizer: Diarizer, threshold: float | None = None, max_history_s: float = 60.0) -> None:
        c = diarizer.config
        self.diarizer = diarizer
        self.window_s, self.hop_s = c.window_s, c.hop_s
        self.threshold = c.online_threshold if threshold is None else threshold
        self.max_history_s = max(max_history_s, 2 * c.window_s)
        self._vad = diarizer.encoder.vad.stream()
        self._frame = diarizer.encoder.vad.frame_s
        self._audio = np.zeros(0, np.float32)
        self._probs = np.zeros(0, np.float32)
        self._offset_s = 0.0  # stream time of self._audio[0]
        self._heard_s = 0.0
        self._next_end = self.window_s
        self._sums: list[np.ndarray] = []
        self.turns: list[Turn] = []

    @property
    def delay_s(self) -> float:
        return self.window_s / 2 + self.hop_s

    @property
    def centroids(self) -> np.ndarray:
        if not self._sums:
            return np.zeros((0, 0), np.float32)
        c = np.stack(self._sums)
        return (c / np.maximum(np.linalg.norm(c, axis=1, keepdims=True), 1e-10)).astype(np.float32)

    def feed(self, audio: np.ndarray, sample_rate: int = SAMPLE_RATE) -> list[Turn]:
        """Add audio; return the turns that were opened or extended (final up to their end)."""
        a = to_mono16k(audio, sample_rate)
        self._audio = np.concatenate([self._audio, a])
        self._probs = np.concatenate([self._probs, self._vad.feed(a)])
        self._heard_s += a.size / SAMPLE_RATE
        changed: list[Turn] = []
        while self._next_end <= self._heard_s + 1e-9:
            turn = self._step(self._next_end)
            if turn is not None:
                changed.append(turn)
            self._next_end += self.hop_s
        self._trim()
        return changed

    def _step(self, end: float) -> Turn | None:
        c = self.diarizer.config
        start = end - self.window_s
        mid = (start + end) / 2
        fa = round((mid - self.hop_s / 2 - self._offset_s) / self._frame)
        fb = round((mid + self.hop_s / 2 - self._offset_s) / self._frame)
        voiced = np.flatnonzero(self._voiced(fa, fb))
        if voiced.size == 0:
            return None
        f0 = max(round((start - self._offset_s) / self._frame), 0)
        probs = self._probs[f0 : round((end - self._offset_s) / self._frame)]
        enough = probs.size > 0 and float(np.mean(probs >= c.vad_threshold)) >= 0.5
        if not enough and not self._sums:
            return None
        win = self.diarizer.embed_windows(self._audio, [Segment(start - self._offset_s, end - self._offset_s)])
        if not win.spans:
            return None
        # A window that is mostly speech may open or move a cluster; one that is not only takes a label.
        label = self._assign(win.vectors[0], update=enough)
        t0 = self._offset_s + (fa + voiced[0]) * self._frame
        t1 = self._offset_s + (fa + voiced[-1] + 1) * self._frame
        last = self.turns[-1] if self.turns else None
        if last is not None and last.speaker == label and t0 - last.end <= c.min_silence_s:
            self.turns[-1] = Turn(last.start, t1, label)
        else:
            self.turns.append(Turn(t0, t1, label))
        return self.turns[-1]

    def _voiced(self, fa: int, fb: int) -> np.ndarray:
        """Speech frames in [fa, fb): above the VAD threshold, widened by pad_s on each side (the
        look-ahead is within the delay)."""
        c = self.diarizer.config
        pad = round(c.pad_s / self._frame)
        lo, hi = max(fa - pad, 0), min(fb + pad, self._probs.size)
        above = (self._probs[lo:hi] >= c.vad_threshold).astype(float)
        if above.size == 0:
            return np.zeros(max(fb - fa, 0), dtype=bool)
        widened = np.convolve(above, np.ones(2 * pad + 1), mode="same") > 0
        return widened[fa - lo : fa - lo + (fb - fa)]

    def _assign(self, vec: np.ndarray, update: bool = True) -> int:
        if self._sums:
            sims = self.centroids @ vec
            best = int(np.argmax(sims))
            if not update:
                return best
            if 1.0 - float(sims[best]) <= self.threshold:
                self._sums[best] = self._sums[best] + vec
                return best
        self._sums.append(vec.astype(np.float64))
        return len(self._sums) - 1

    def _trim(self) -> None:
        """Drop audio older than max_history_s (whole VAD frames, keeping a window of context)."""
        excess = (self._audio.size / SAMPLE_RATE) - self.max_history_s
        frames = int(excess / self._frame)
        if frames <= 0:
            return
        self._audio = self._audio[round(frames * self._frame * SAMPLE_RATE) :]
        self._probs = self._probs[frames:]
        self._offset_s += frames * self._frame

    def result(self) -> Diarization:
        return Diarization(list(self.turns), self.centroids)
