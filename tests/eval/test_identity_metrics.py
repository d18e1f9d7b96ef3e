"""egomem_eval/identity/metrics.py on tiny cases worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from egomem.errors import InputError
from egomem_eval.identity.metrics import accuracy_at, auc, best_accuracy, eer

# Higher score = more likely the same person. Same pairs score 0.9, 0.8, 0.6;
# different pairs 0.7, 0.5, 0.4.
SCORES = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4])
SAME = np.array([1, 1, 0, 1, 0, 0], dtype=bool)


def test_auc_counts_correctly_ordered_pairs() -> None:
    # 9 (same, different) pairs; only (0.6 same, 0.7 different) is out of order: 8/9.
    assert auc(SCORES, SAME) == pytest.approx(8 / 9)
    assert auc(np.array([0.9, 0.1]), np.array([True, False])) == 1.0
    assert auc(np.array([0.1, 0.9]), np.array([True, False])) == 0.0
    assert auc(np.array([0.5, 0.5]), np.array([True, False])) == 0.5  # a tie counts half


def test_eer_where_false_accepts_meet_false_rejects() -> None:
    # At threshold 0.7: 1 of 3 same pairs rejected (0.6), 1 of 3 different accepted (0.7).
    assert eer(SCORES, SAME) == pytest.approx(1 / 3)
    assert eer(np.array([0.9, 0.1]), np.array([True, False])) == 0.0
    # Interleaved: threshold 0.6 rejects the same pair at 0.4 and accepts the different one at 0.6.
    assert eer(np.array([0.8, 0.6, 0.4, 0.2]), np.array([True, False, True, False])) == pytest.approx(0.5)


def test_accuracy_at_a_threshold_and_the_oracle() -> None:
    # "same" at >= 0.65: predicted T T T F F F against T T F T F F.
    assert accuracy_at(SCORES, SAME, 0.65) == pytest.approx(4 / 6)
    assert accuracy_at(SCORES, SAME, 0.6) == pytest.approx(5 / 6)  # a score equal to the threshold is "same"
    assert accuracy_at(SCORES, SAME, 1.0) == pytest.approx(3 / 6)
    # Thresholds 0.6 and 0.8 both give 5/6; the first (lowest) is returned.
    assert best_accuracy(SCORES, SAME) == (pytest.approx(5 / 6), 0.6)


@pytest.mark.parametrize(
    ("scores", "labels"),
    [
        ([0.1, 0.2], [True]),  # sizes differ
        ([], []),  # nothing
        ([0.1, 0.2], [True, True]),  # no different pair
        ([0.1, 0.2], [False, False]),  # no same pair
    ],
)
def test_bad_input_is_refused(scores: list[float], labels: list[bool]) -> None:
    for fn in (auc, eer, best_accuracy):
        with pytest.raises(InputError):
            fn(np.array(scores), np.array(labels))
    with pytest.raises(InputError):
        accuracy_at(np.array(scores), np.array(labels), 0.5)


def test_eer_point_gives_the_threshold_of_the_crossing() -> None:
    from egomem_eval.identity.metrics import eer_point

    # As above: at 0.7 one same pair of three is rejected and one different pair of three accepted.
    assert eer_point(SCORES, SAME) == pytest.approx((1 / 3, 0.7))
    assert eer_point(np.array([0.9, 0.1]), np.array([True, False])) == (0.0, 0.9)
