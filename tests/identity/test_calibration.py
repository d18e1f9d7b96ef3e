"""Calibrated LLRs (identity/calibration.py): the fit, the shipped maps, the cost-derived thresholds."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from egomem.errors import InputError
from egomem.identity.calibration import (
    DecisionCosts,
    LinearCalibration,
    cllr,
    decision_thresholds,
    expected_cost,
    fit_logistic,
    fuse,
    load_calibration,
)


def test_fit_recovers_the_true_llr_of_two_gaussians() -> None:
    # Scores N(+1, 1) for same, N(-1, 1) for different: the true LLR is exactly 2 * score.
    rng = np.random.default_rng(0)
    s = np.concatenate([rng.normal(1, 1, 20000), rng.normal(-1, 1, 60000)])
    y = np.concatenate([np.ones(20000, bool), np.zeros(60000, bool)])
    cal = fit_logistic(s, y)
    assert cal.slope == pytest.approx(2.0, abs=0.08) and cal.offset == pytest.approx(0.0, abs=0.06)
    # The class imbalance (1:3) is the training prior, corrected away: still an LLR, not a posterior.
    assert cllr(cal.llrs(s), y) < cllr(np.zeros_like(s), y) == pytest.approx(1.0)


def test_fit_needs_both_kinds_of_trial() -> None:
    with pytest.raises(InputError):
        fit_logistic(np.array([0.1, 0.2]), np.array([True, True]))


def test_shipped_maps_are_monotone_with_sane_signs() -> None:
    cal = load_calibration()
    d = np.linspace(0.2, 1.0, 17)
    f = cal.face.llrs(d)
    assert np.all(np.diff(f) < 0)  # a larger face distance is less evidence of the same person
    assert cal.face.llr(0.35) > 0 > cal.face.llr(0.8)  # dlib: same people ~0.4, different ~0.8
    for v in (cal.voice_long, cal.voice_short):
        s = np.linspace(-2, 12, 15)
        assert np.all(np.diff(v.llrs(s)) > 0)
        assert v.llr(10.0) > 0 > v.llr(0.0)  # s-norm: impostors centre on 0
    assert cal.face.llr(float("inf")) < 0 and cal.face.llr(float("nan")) < 0


def test_unreadable_or_inverted_calibration_is_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "c.json"
    bad.write_text("{}")
    with pytest.raises(InputError, match="calibration"):
        load_calibration(bad)
    maps = {"slope": 1.0, "offset": 0.0}
    bad.write_text(json.dumps({"face": maps, "voice_long": maps, "voice_short": maps}))
    with pytest.raises(InputError, match="must fall with distance"):
        load_calibration(bad)


def test_thresholds_follow_from_costs() -> None:
    known, new = decision_thresholds(DecisionCosts(prior=0.5, merge_cost=20, split_cost=1, unsure_cost=0.2))
    # KNOWN when P(same) >= 1 - 0.2/20 = 0.99; NEW when P(same) <= 0.2/1 = 0.2
    assert known == pytest.approx(math.log(0.99 / 0.01)) and new == pytest.approx(math.log(0.2 / 0.8))
    # A dearer merge raises the bar; a lower prior of meeting a known person raises both.
    assert decision_thresholds(DecisionCosts(0.5, 100, 1, 0.2))[0] > known
    k2, n2 = decision_thresholds(DecisionCosts(0.1, 20, 1, 0.2))
    assert k2 > known and n2 > new
    # Asking dearer than the binary error at the crossing: no UNSURE band, the Bayes threshold.
    k3, n3 = decision_thresholds(DecisionCosts(0.5, 2, 1, 5))
    assert k3 == n3 == pytest.approx(math.log(2))
    with pytest.raises(InputError):
        decision_thresholds(DecisionCosts(1.0, 1, 1, 1))


def test_expected_cost_counts_merges_and_splits() -> None:
    c = DecisionCosts(prior=0.5, merge_cost=10, split_cost=1, unsure_cost=0.1)
    known, new = decision_thresholds(c)
    llr = np.array([known + 1, new - 1, known + 1, (known + new) / 2])
    same = np.array([True, True, False, False])
    m = expected_cost(llr, same, c)
    assert m["false_merge_rate"] == 0.5 and m["false_split_rate"] == 0.5 and m["unsure_different_rate"] == 0.5
    assert m["cost"] == pytest.approx(0.5 * 0.5 * 1 + 0.5 * (0.5 * 10 + 0.5 * 0.1))


def test_fusion_adds_evidence_including_against() -> None:
    assert fuse(3.0, -4.0) == -1.0 and fuse(None, 2.0) == 2.0 and fuse(None, None) == 0.0
    assert LinearCalibration(-20.0, 12.0).llr(0.8) == pytest.approx(-4.0)
