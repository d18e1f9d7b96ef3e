"""The shipped trigger and the rule baseline on a short real-speech stream; bad input."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from egomem.errors import InputError
from egomem.memory.trigger.features import N_FEATURES, SAMPLES_PER_STEP, FeatureExtractor
from egomem.memory.trigger.rules import RuleTrigger
from egomem.memory.trigger.tagger import WEIGHTS, EpisodicTrigger, sessions, viterbi
from egomem.perception.audio import to_mono16k

TOLERANCE = 10  # steps (0.8 s)


@pytest.fixture(scope="module")
def trigger() -> EpisodicTrigger:
    return EpisodicTrigger()


@pytest.fixture(scope="module")
def feats(trigger: EpisodicTrigger, dialog_stream: Any) -> np.ndarray:
    return trigger.extractor(dialog_stream.listen, dialog_stream.speak)


def _close(found: list[tuple[int, int]], true: list[tuple[int, int]]) -> bool:
    return len(found) == len(true) and all(
        abs(a - c) <= TOLERANCE and abs(b - d) <= TOLERANCE for (a, b), (c, d) in zip(found, true, strict=True)
    )


def test_features_shape(feats: np.ndarray, dialog_stream: Any) -> None:
    assert feats.shape == (-(-dialog_stream.listen.size // SAMPLES_PER_STEP), N_FEATURES)
    assert np.all(np.isfinite(feats))


def test_model_finds_both_sessions(trigger: EpisodicTrigger, feats: np.ndarray, dialog_stream: Any) -> None:
    labels = trigger.tag_features(feats)
    assert labels.dtype == np.int8 and labels.size == feats.shape[0]
    assert _close(sessions(labels), dialog_stream.sessions), (sessions(labels), dialog_stream.sessions)


def test_rule_baseline_finds_both_sessions(feats: np.ndarray, dialog_stream: Any) -> None:
    found = sessions(RuleTrigger.calibrated().tag_features(feats))
    assert _close(found, dialog_stream.sessions), (found, dialog_stream.sessions)


def test_tag_from_audio_stereo_8k(trigger: EpisodicTrigger, dialog_stream: Any) -> None:
    # A stereo 8 kHz capture goes through to_mono16k and is still tagged into two sessions.
    from scipy.signal import resample_poly

    listen8 = resample_poly(dialog_stream.listen, 1, 2)
    stereo = np.stack([listen8, listen8], axis=1)
    listen = to_mono16k(stereo, 8000)
    speak = to_mono16k(resample_poly(dialog_stream.speak, 1, 2), 8000)
    n = min(listen.size, speak.size)
    found = sessions(trigger.tag(listen[:n], speak[:n]))
    assert _close(found, dialog_stream.sessions), (found, dialog_stream.sessions)


def test_empty_and_silent_input(trigger: EpisodicTrigger) -> None:
    empty = np.zeros(0, dtype=np.float32)
    assert trigger.tag(empty, empty).size == 0
    silent = np.zeros(16000 * 5, dtype=np.float32)
    labels = trigger.tag(silent, silent)
    assert labels.size == 63 and sessions(labels) == []
    assert RuleTrigger().sessions(trigger.extractor(silent, silent)) == []


def test_bad_input_is_a_clear_error(trigger: EpisodicTrigger) -> None:
    x = np.zeros(16000, dtype=np.float32)
    with pytest.raises(InputError, match="differ in length"):
        trigger.tag(x, np.zeros(32000, dtype=np.float32))
    with pytest.raises(InputError, match="to_mono16k"):
        trigger.tag(np.zeros((16000, 2), dtype=np.float32), x)
    with pytest.raises(InputError, match="float"):
        trigger.tag((x * 100).astype(np.int16), x)
    with pytest.raises(InputError, match="NaN"):
        trigger.tag(np.full(16000, np.nan, dtype=np.float32), x)
    with pytest.raises(InputError):
        trigger.tag_features(np.zeros((10, 3), dtype=np.float32))
    with pytest.raises(InputError):
        RuleTrigger().sessions(np.zeros((10, 3), dtype=np.float32))


def test_missing_weights_is_a_clear_error(tmp_path: Any) -> None:
    with pytest.raises(InputError, match="weights not found"):
        EpisodicTrigger(tmp_path / "none.pt")


def test_short_length_mismatch_is_padded() -> None:
    # Channels a few samples apart (capture jitter) are padded, not rejected.
    fx = FeatureExtractor(lambda a: np.zeros(a.size // 512, dtype=np.float32), lambda a, w: np.zeros((len(w), 256)))
    f = fx(np.zeros(16000, dtype=np.float32), np.zeros(15990, dtype=np.float32))
    assert f.shape == (13, N_FEATURES)


def test_start_penalty_drops_a_weak_blip_and_keeps_a_clear_session() -> None:
    p = np.full((60, 4), 0.01)
    p[:, 0] = 0.97
    p[10:40] = [0.02, 0.02, 0.94, 0.02]
    p[10], p[39] = [0.02, 0.9, 0.06, 0.02], [0.02, 0.02, 0.06, 0.9]
    p[50:53] = [0.3, 0.2, 0.3, 0.2]  # a short, weakly supported session
    p[50], p[52] = [0.3, 0.4, 0.2, 0.1], [0.3, 0.1, 0.2, 0.4]
    assert sessions(viterbi(np.log(p))) == [(10, 39), (50, 52)]
    assert sessions(viterbi(np.log(p), start_penalty=2.0)) == [(10, 39)]
    assert sessions(viterbi(np.log(p), start_penalty=8.0)) == [(10, 39)]


def test_shipped_decoding_matches_its_training_report(trigger: EpisodicTrigger) -> None:
    # The start penalty was chosen on the training run's dev streams and shipped inside the weights.
    report = json.loads(WEIGHTS.with_suffix(".json").read_text())
    assert trigger.start_penalty == report["start_penalty"]
