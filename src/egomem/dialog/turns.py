"""User turns for cascaded models: streaming VAD over the listening channel, and ASR
of each finished utterance.

A turn ends after `end_silence_s` of non-speech; very short blips are dropped. The
detector keeps the audio of the turn in progress only (bounded by `max_turn_s`), and the
VAD probabilities of the last `history_s` seconds: the episodic trigger reads the same
Silero model over the same channel, and takes them from here instead of running it again
over its whole open window every memory round.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass

import numpy as np

from egomem.perception.audio import SAMPLE_RATE
from egomem.perception.vad import WINDOW, SileroVAD

WINDOW_S = WINDOW / SAMPLE_RATE


@dataclass(frozen=True)
class Utterance:
    start: float
    end: float
    audio: np.ndarray


class TurnDetector:
    def __init__(
        self,
        vad: SileroVAD,
        *,
        threshold: float = 0.5,
        end_silence_s: float = 0.8,
        min_speech_s: float = 0.3,
        max_turn_s: float = 30.0,
        pad_s: float = 0.2,
        history_s: float = 0.0,
    ) -> None:
        self._stream = vad.stream()
        # VAD probabilities of the last `history_s` seconds, in fed pieces; window i of the
        # stream starts at i * WINDOW_S.
        self._history: deque[np.ndarray] = deque()
        self._history_first = 0  # index of the first window in _history
        self._history_held = 0  # windows in _history (kept, not summed on every step)
        self._history_windows = int(np.ceil(history_s / WINDOW_S)) if history_s > 0 else 0
        self._history_lock = threading.Lock()  # fed by the stream, read by the memory process
        self.threshold = threshold
        self.end_silence_s = end_silence_s
        self.min_speech_s = min_speech_s
        self.max_turn_s = max_turn_s
        self.pad_s = pad_s
        self._t = 0.0  # stream time of the next VAD window
        self._buf: list[np.ndarray] = []
        self._buf_start = 0.0
        self._start: float | None = None  # start of the turn in progress
        self._last_voice = 0.0
        self._voiced_s = 0.0
        self._consumed = 0  # samples fed so far

    def feed(self, audio: np.ndarray) -> list[Utterance]:
        """Feed the next piece of the listening channel; return turns that just ended."""
        x = np.asarray(audio, dtype=np.float32).reshape(-1)
        self._buf.append(x)
        self._consumed += x.size
        self._trim()
        done: list[Utterance] = []
        probs = self._stream.feed(x)
        self._remember(probs)
        for p in probs:
            t = self._t
            self._t += WINDOW_S
            voiced = p >= (self.threshold if self._start is None else self.threshold - 0.15)
            if voiced:
                if self._start is None:
                    self._start, self._voiced_s = t, 0.0
                self._last_voice = t + WINDOW_S
                self._voiced_s += WINDOW_S
            elif self._start is not None and t + WINDOW_S - self._last_voice >= self.end_silence_s:
                utt = self._close()
                if utt is not None:
                    done.append(utt)
            if self._start is not None and t - self._start >= self.max_turn_s:
                utt = self._close()
                if utt is not None:
                    done.append(utt)
        return done

    def _remember(self, probs: np.ndarray) -> None:
        if self._history_windows == 0 or probs.size == 0:
            return
        with self._history_lock:
            self._history.append(probs)
            self._history_held += probs.size
            while self._history and self._history_held - self._history[0].size >= self._history_windows:
                dropped = self._history.popleft().size
                self._history_held -= dropped
                self._history_first += dropped

    def vad_since(self, sample: int) -> tuple[np.ndarray, int]:
        """The VAD probabilities of every window from the one holding stream sample `sample`
        to the newest, and the sample the first of them starts at; windows older than the
        history kept are missing (the start says where they begin)."""
        with self._history_lock:
            first = max(sample // WINDOW, self._history_first)
            held = np.concatenate(list(self._history)) if self._history else np.zeros(0, np.float32)
            return held[first - self._history_first :], first * WINDOW

    @property
    def open_since(self) -> float | None:
        """Start of the turn in progress (speech heard, its end not yet), None between turns. The
        memory process reads it: no session may be closed while a turn that started in it is open."""
        return self._start

    def flush(self) -> list[Utterance]:
        """End of stream: close the turn in progress."""
        if self._start is None:
            return []
        utt = self._close()
        return [utt] if utt is not None else []

    def _close(self) -> Utterance | None:
        assert self._start is not None
        start, end, voiced = self._start, self._last_voice, self._voiced_s
        self._start = None
        if voiced < self.min_speech_s:
            return None
        return Utterance(start, end, self._audio(max(start - self.pad_s, 0.0), end + self.pad_s))

    def _audio(self, t0: float, t1: float) -> np.ndarray:
        a = np.concatenate(self._buf) if self._buf else np.zeros(0, np.float32)
        lo = max(int((t0 - self._buf_start) * SAMPLE_RATE), 0)
        hi = max(int((t1 - self._buf_start) * SAMPLE_RATE), lo)
        return a[lo:hi].copy()

    def _trim(self) -> None:
        """Keep only audio that the turn in progress (or the next one) may still need."""
        keep_from = (self._start if self._start is not None else self._t) - self.pad_s - 1.0
        total = sum(b.size for b in self._buf)
        drop = int((keep_from - self._buf_start) * SAMPLE_RATE)
        if drop <= 0 or len(self._buf) < 2:
            return
        a = np.concatenate(self._buf)
        drop = min(drop, total)
        self._buf = [a[drop:]]
        self._buf_start += drop / SAMPLE_RATE
