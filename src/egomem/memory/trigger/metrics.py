"""Session spans from step labels, and the trigger's metrics.

Labels: 0 no dialog, 1 session start, 2 in session, 3 session end. A span is
(start_step, end_step) with the end step included.

- Jaccard: |P ∩ T| / |P ∪ T| of the steps inside predicted (P) and true (T) sessions
  of one stream (1.0 when both are empty).
- span_match@N: a predicted start (end) matches a true start (end) within ±N steps,
  each true boundary matched at most once; precision, recall and F1 over boundaries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from egomem.errors import InputError

Span = tuple[int, int]


def sessions(labels: np.ndarray | Sequence[int]) -> list[Span]:
    """Decode spans from labels; tolerant of ill-formed sequences (a 2 after 0 opens, a 0 closes)."""
    lab = np.asarray(labels)
    if lab.ndim != 1:
        raise InputError(f"labels must be 1-d, got shape {lab.shape}")
    if lab.size and (lab.min() < 0 or lab.max() > 3):
        raise InputError("labels must be in {0, 1, 2, 3}")
    out: list[Span] = []
    open_at: int | None = None
    for i, v in enumerate(lab.tolist()):
        if v == 1:
            if open_at is not None:
                out.append((open_at, i - 1))
            open_at = i
        elif v == 2:
            open_at = i if open_at is None else open_at
        elif v == 3:
            out.append((i if open_at is None else open_at, i))
            open_at = None
        elif open_at is not None:
            out.append((open_at, i - 1))
            open_at = None
    if open_at is not None:
        out.append((open_at, lab.size - 1))
    return out


def labels_from_sessions(spans: Sequence[Span], steps: int) -> np.ndarray:
    """The label sequence of non-overlapping spans (a one-step span is labelled as its start)."""
    lab = np.zeros(steps, dtype=np.int8)
    for a, b in spans:
        if not 0 <= a <= b < steps:
            raise InputError(f"span {(a, b)} outside 0..{steps - 1}")
        lab[a : b + 1] = 2
        lab[b] = 3
        lab[a] = 1
    return lab


def jaccard(true_spans: Sequence[Span], pred_spans: Sequence[Span], steps: int) -> float:
    t = labels_from_sessions(true_spans, steps) > 0
    p = labels_from_sessions(pred_spans, steps) > 0
    union = int(np.sum(t | p))
    return 1.0 if union == 0 else float(np.sum(t & p)) / union


def _match_points(true: list[int], pred: list[int], n: int) -> int:
    """Largest matching with |t - p| <= n: greedy over sorted points is optimal on a line."""
    true, pred = sorted(true), sorted(pred)
    i = j = matched = 0
    while i < len(true) and j < len(pred):
        if pred[j] < true[i] - n:
            j += 1
        elif pred[j] > true[i] + n:
            i += 1
        else:
            matched, i, j = matched + 1, i + 1, j + 1
    return matched


@dataclass
class SpanCounts:
    matched: int = 0
    predicted: int = 0
    true: int = 0

    def add(self, true_spans: Sequence[Span], pred_spans: Sequence[Span], n: int) -> None:
        for k in (0, 1):  # starts, then ends
            self.matched += _match_points([s[k] for s in true_spans], [s[k] for s in pred_spans], n)
        self.predicted += 2 * len(pred_spans)
        self.true += 2 * len(true_spans)

    @property
    def precision(self) -> float:
        return self.matched / self.predicted if self.predicted else (1.0 if self.true == 0 else 0.0)

    @property
    def recall(self) -> float:
        return self.matched / self.true if self.true else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def span_match(true_spans: Sequence[Span], pred_spans: Sequence[Span], n: int) -> SpanCounts:
    c = SpanCounts()
    c.add(true_spans, pred_spans, n)
    return c
