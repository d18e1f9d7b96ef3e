"""The trigger reads the turn detector's VAD instead of running Silero again: the same
probabilities, the same features, and a history that stays bounded."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from egomem.dialog.turns import WINDOW_S, TurnDetector
from egomem.memory.trigger.features import SAMPLES_PER_STEP, FeatureExtractor, KnownVAD
from egomem.perception.vad import WINDOW, SileroVAD

STEP = 1280  # samples per 80 ms step: the agent feeds the detector step by step


@pytest.fixture(scope="module")
def vad() -> SileroVAD:
    return SileroVAD()


def _fed(vad: SileroVAD, listen: np.ndarray, history_s: float) -> TurnDetector:
    turns = TurnDetector(vad, history_s=history_s)
    for a in range(0, listen.size - STEP + 1, STEP):
        turns.feed(listen[a : a + STEP])
    return turns


def test_history_holds_what_silero_gives_over_the_whole_stream(vad: SileroVAD, dialog_stream: Any) -> None:
    listen = dialog_stream.listen[: (dialog_stream.listen.size // STEP) * STEP]
    turns = _fed(vad, listen, history_s=listen.size / 16000 + 1.0)
    probs, first = turns.vad_since(0)
    whole = vad.probabilities(listen)
    assert first == 0 and probs.size == whole.size
    np.testing.assert_allclose(probs, whole, atol=1e-6)
    later, later_first = turns.vad_since(160_000)  # 10 s
    assert later_first <= 160_000 < later_first + WINDOW
    np.testing.assert_allclose(later, whole[-later.size :], atol=1e-6)


def test_history_is_bounded(vad: SileroVAD, dialog_stream: Any) -> None:
    listen = dialog_stream.listen[: (dialog_stream.listen.size // STEP) * STEP]
    turns = _fed(vad, listen, history_s=5.0)
    probs, first = turns.vad_since(0)
    # Asked from the stream's start, it gives what it kept: about the last 5 s, starting later.
    assert 5.0 <= probs.size * WINDOW_S < 5.0 + 1.0
    assert abs(first - (listen.size - probs.size * WINDOW)) < WINDOW


def test_features_from_the_shared_vad_match_a_whole_stream_pass(vad: SileroVAD, dialog_stream: Any) -> None:
    listen, speak = dialog_stream.listen, dialog_stream.speak
    n = (min(listen.size, speak.size) // STEP) * STEP
    listen, speak = listen[:n], speak[:n]
    ext = FeatureExtractor.default()
    whole = ext(listen, speak)
    turns = _fed(vad, listen, history_s=n / 16000 + 1.0)
    # A memory round's window that starts mid-stream, at a step that is not a VAD window edge.
    k = 101
    origin = k * SAMPLES_PER_STEP
    probs, first = turns.vad_since(origin)
    part = ext(listen[origin:], speak[origin:], KnownVAD(probs, first - origin))
    # The VAD columns are the whole pass's, step for step (Silero's state carried from the start).
    np.testing.assert_allclose(part[:, :2], whole[k:, :2], atol=1e-6)


def test_history_that_misses_the_window_start_is_not_used(dialog_stream: Any) -> None:
    listen, speak = dialog_stream.listen[: 40 * STEP], dialog_stream.speak[: 40 * STEP]
    calls: list[int] = []

    def counting_vad(audio: np.ndarray) -> np.ndarray:
        calls.append(audio.size)
        return np.zeros(audio.size // 512, np.float32)

    ext = FeatureExtractor(counting_vad, lambda audio, windows: np.zeros((len(windows), 256), np.float32))
    ext(listen, speak, KnownVAD(np.ones(10, np.float32), start=16000))  # starts 1 s late: Silero runs here
    assert calls == [listen.size]
    ext(listen, speak, KnownVAD(np.ones(100, np.float32), start=0))
    assert calls == [listen.size]  # covered: not run again
