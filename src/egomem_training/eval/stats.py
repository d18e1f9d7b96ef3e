"""Confidence intervals: Wilson for a proportion (Fact Score), percentile bootstrap for a mean
(Answer Quality), and a cluster bootstrap for a pooled share whose items come in groups
(extraction precision and recall: the items of one session rise and fall together, so
resampling items alone would give an interval too narrow). 95 % all; None where there is
nothing to estimate."""

from __future__ import annotations

import math

import numpy as np

Z95 = 1.959964


def listed(ci: tuple[float, float] | None, digits: int = 4) -> list[float] | None:
    """An interval as JSON writes it: [low, high] to `digits` places (more than a 95 % interval
    of a few hundred items supports), or None."""
    return None if ci is None else [round(ci[0], digits), round(ci[1], digits)]


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    if n <= 0:
        return None
    p = successes / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (max(0.0, mid - half), min(1.0, mid + half))


def bootstrap_mean(values: list[float], *, resamples: int = 2000, seed: int = 0) -> tuple[float, float] | None:
    if not values:
        return None
    x = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, len(x), size=(resamples, len(x)))].mean(axis=1)
    return (float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5)))


def bootstrap_share(
    hits: np.ndarray, clusters: np.ndarray, *, resamples: int = 2000, seed: int = 0
) -> tuple[float, float] | None:
    """Percentile interval of `hits.mean()` resampling whole clusters (`clusters[i]` names
    item i's group), each draw pooling the items of the clusters it picked."""
    hits = np.asarray(hits, dtype=float)
    if not len(hits):
        return None
    _, group = np.unique(np.asarray(clusters), return_inverse=True)
    k = int(group.max()) + 1
    num = np.bincount(group, weights=hits, minlength=k)
    den = np.bincount(group, minlength=k).astype(float)
    draws = np.random.default_rng(seed).integers(0, k, size=(resamples, k))
    shares = num[draws].sum(axis=1) / den[draws].sum(axis=1)  # every cluster has >= 1 item
    return (float(np.percentile(shares, 2.5)), float(np.percentile(shares, 97.5)))
