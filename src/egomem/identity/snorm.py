"""Adaptive symmetric score normalisation (AS-norm) for speaker scores, as in the EgoMem paper.

For a raw cosine score s(q, k) between a query q and an enrolled key k:
  z_q = (s - mean_q) / std_q,  z_k = (s - mean_k) / std_k,  score = (z_q + z_k) / 2
where mean_x / std_x are taken over the top-N highest cosine scores of x against an
impostor cohort (adaptive: only the N closest impostors, so the statistics describe
the hard impostors for that voice). The cohort is the shipped file of short speech
chunks (identity/data/voice_cohort.npz) plus, once there are enough enrolled users,
the enrolled keys of every user except the one being scored.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from egomem.errors import InputError

MIN_STD = 1e-3  # guards against a degenerate cohort (all identical scores)


@dataclass(frozen=True)
class CohortStats:
    mean: float
    std: float


def top_n_stats(scores: np.ndarray, top_n: int) -> CohortStats:
    """Mean and std of the `top_n` largest cohort scores."""
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    if s.size == 0:
        raise InputError("s-norm needs a non-empty cohort")
    n = min(top_n, s.size)
    top = np.partition(s, s.size - n)[s.size - n :] if n < s.size else s
    return CohortStats(float(top.mean()), max(float(top.std()), MIN_STD))


def snorm(raw: float, query: CohortStats, key: CohortStats) -> float:
    return 0.5 * ((raw - query.mean) / query.std + (raw - key.mean) / key.std)


class SNorm:
    """Holds the cohort matrix (rows L2-normalised) and computes statistics against it."""

    def __init__(self, cohort: np.ndarray, top_n: int = 100) -> None:
        c = np.asarray(cohort, dtype=np.float32)
        if c.ndim != 2 or c.shape[0] == 0:
            raise InputError(f"cohort must be a non-empty 2-d array, got shape {c.shape}")
        norms = np.linalg.norm(c, axis=1, keepdims=True)
        if not np.all(np.isfinite(c)) or np.any(norms == 0):
            raise InputError("cohort contains NaN, infinite or zero vectors")
        self.cohort = c / norms
        self.top_n = top_n

    @property
    def dim(self) -> int:
        return int(self.cohort.shape[1])

    def cohort_scores(self, v: np.ndarray) -> np.ndarray:
        u = np.asarray(v, dtype=np.float32).reshape(-1)
        return self.cohort @ (u / (float(np.linalg.norm(u)) or 1.0))

    def stats(self, v: np.ndarray, extra: np.ndarray | None = None) -> CohortStats:
        """Top-N statistics of `v` against the cohort plus `extra` cohort scores (e.g. other users' keys)."""
        s = self.cohort_scores(v)
        if extra is not None and extra.size:
            s = np.concatenate([s, np.asarray(extra, dtype=np.float32).reshape(-1)])
        return top_n_stats(s, self.top_n)

    def score(self, raw: float, query: np.ndarray, key: np.ndarray) -> float:
        """S-normed score of one (query, key) pair against the shipped cohort only."""
        return snorm(raw, self.stats(query), self.stats(key))
