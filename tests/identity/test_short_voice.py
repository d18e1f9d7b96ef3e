"""Short speech in the identity layer: its own threshold, no keys learnt from it, and the cohort
without the evaluated speakers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from egomem.config import Config
from egomem.errors import InputError
from egomem.identity.calibration import LinearCalibration
from egomem.identity.cohort import load_cohort
from egomem.identity.identifier import PersonIdentifier
from egomem.identity.types import IdentityStatus, VoiceObservation
from egomem.schemas import Modality
from egomem.store.sqlite import SQLiteStore


@pytest.fixture
def ident(tmp_path: Path) -> Iterator[PersonIdentifier]:
    store = SQLiteStore(tmp_path / "m.db")
    cfg = Config(data_dir=tmp_path)
    cfg.voice.threshold, cfg.voice.short_threshold, cfg.voice.short_speech_s = 3.0, 2.0, 1.6
    yield PersonIdentifier(store, cfg)
    store.close()


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v)).astype(np.float32)


def test_the_threshold_follows_the_length_of_speech(ident: PersonIdentifier) -> None:
    assert ident.voice_threshold(0.4) == 2.0
    assert ident.voice_threshold(1.59) == 2.0
    assert ident.voice_threshold(1.6) == 3.0  # a full resemblyzer window is long speech
    ident.config.voice.short_threshold = None
    assert ident.voice_threshold(0.4) == 3.0  # no short threshold: one threshold for all


def test_a_short_query_is_judged_with_the_short_calibration(ident: PersonIdentifier) -> None:
    rng = np.random.default_rng(0)
    key = _unit(rng.standard_normal(256))
    uid = ident.enroll(None, voice=VoiceObservation(key, 3.0))
    for _ in range(5):  # a few other users, so the query's score is not the only one
        ident.enroll(None, voice=VoiceObservation(_unit(rng.standard_normal(256)), 3.0))
    q = _unit(key + 0.9 * _unit(rng.standard_normal(256)))
    score = next(m.value for m in ident.voice_scores(q, k_users=10) if m.user_id == uid)
    # The decision uses the short-speech calibration map for short speech (identity/calibration.py): maps that
    # put this score above the KNOWN threshold for short speech and below the NEW one for long speech.
    known, new = ident.thresholds
    base = ident.calibration
    ident.calibration = type(base)(
        base.face, LinearCalibration(1.0, new - 1.0 - score), LinearCalibration(1.0, known + 1.0 - score), base.meta
    )
    short = ident.decide(None, VoiceObservation(q, 0.8))
    long = ident.decide(None, VoiceObservation(q, 2.5))
    assert short.status == IdentityStatus.KNOWN and short.user_id == uid
    assert long.status == IdentityStatus.NEW


def test_no_key_is_learnt_from_short_speech(ident: PersonIdentifier) -> None:
    rng = np.random.default_rng(1)
    key = _unit(rng.standard_normal(256))
    uid = ident.enroll(None, voice=VoiceObservation(key, 3.0))
    ident.config.voice.refresh_score = -100.0  # every match is "confident": only the length decides
    ident.config.voice.short_threshold = ident.config.voice.threshold = -100.0
    q = _unit(key + 0.5 * _unit(rng.standard_normal(256)))  # unlike the key: a new condition
    assert ident.learn(ident.decide(None, VoiceObservation(q, 0.7))) == []
    assert ident.learn(ident.decide(None, VoiceObservation(q, 2.0))) == [Modality.VOICE]
    assert len(ident.store.list_keys(Modality.VOICE, user_id=uid)) == 2


def test_the_cohort_can_leave_out_speakers_by_source() -> None:
    full = load_cohort()
    without = load_cohort(exclude=("fsdd:",))
    assert full.shape == (293, 256) and without.shape == (221, 256)  # 72 FSDD chunks in the shipped file
    assert np.allclose(np.linalg.norm(without, axis=1), 1.0, atol=1e-4)
    with pytest.raises(InputError):
        load_cohort(exclude=("ami:", "fsdd:"))  # nothing left
