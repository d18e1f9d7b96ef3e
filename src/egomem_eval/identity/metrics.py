"""Verification and identification metrics (shared by `bench face` and `bench speaker`)."""

from __future__ import annotations

import numpy as np

from egomem.errors import InputError


def _check(scores: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    y = np.asarray(labels, dtype=bool).reshape(-1)
    if s.size != y.size or s.size == 0:
        raise InputError("metrics need as many labels as scores, and at least one")
    if y.all() or not y.any():
        raise InputError("metrics need both same and different pairs")
    return s, y


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Area under the ROC curve; higher score = more likely same (Mann-Whitney, ties count half)."""
    from scipy.stats import rankdata

    s, y = _check(scores, labels)
    r = rankdata(s)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    return float((r[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def eer(scores: np.ndarray, labels: np.ndarray) -> float:
    """Equal error rate: where false accepts and false rejects cross (mean of the two at the crossing)."""
    return eer_point(scores, labels)[0]


def eer_point(scores: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """(equal error rate, the threshold where it is reached: "same" when score >= threshold)."""
    s, y = _check(scores, labels)
    ths = np.unique(s)
    pos, neg = np.sort(s[y]), np.sort(s[~y])
    frr = np.searchsorted(pos, ths, side="left") / pos.size  # same pairs below the threshold
    far = 1.0 - np.searchsorted(neg, ths, side="left") / neg.size  # different pairs at or above it
    i = int(np.argmin(np.abs(frr - far)))
    return float((frr[i] + far[i]) / 2), float(ths[i])


def accuracy_at(scores: np.ndarray, labels: np.ndarray, threshold: float) -> float:
    """Accuracy deciding "same" when score >= threshold."""
    s, y = _check(scores, labels)
    return float(np.mean((s >= threshold) == y))


def best_accuracy(scores: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """(best accuracy over all thresholds, that threshold): an oracle figure, tuned on the data itself."""
    s, y = _check(scores, labels)
    ths = np.concatenate([np.unique(s), [np.inf]])
    accs = [float(np.mean((s >= t) == y)) for t in ths]
    i = int(np.argmax(accs))
    return accs[i], float(ths[i])
