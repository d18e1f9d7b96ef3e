"""Confidence intervals: Wilson for a proportion (Fact Score), percentile bootstrap for a mean
(Answer Quality). 95 % both; None where there is nothing to estimate."""

from __future__ import annotations

import math

import numpy as np

Z95 = 1.959964


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
