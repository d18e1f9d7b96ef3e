"""Trigger metrics and span decoding on hand-made label sequences (exact values)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from egomem.errors import InputError
from egomem.memory.trigger.metrics import jaccard, labels_from_sessions, sessions, span_match
from egomem.memory.trigger.tagger import viterbi


def test_sessions_well_formed() -> None:
    assert sessions([0, 1, 2, 2, 3, 0, 0, 1, 3, 1, 2, 3]) == [(1, 4), (7, 8), (9, 11)]


def test_sessions_tolerates_ill_formed_sequences() -> None:
    # A 2 after 0 opens, a 0 closes, a 1 inside a session splits it, an open session runs to the end.
    assert sessions([2, 2, 0, 1, 2, 1, 2, 2]) == [(0, 1), (3, 4), (5, 7)]
    assert sessions([3, 0, 0]) == [(0, 0)]
    assert sessions([]) == []
    assert sessions(np.zeros(5, dtype=np.int8)) == []


def test_sessions_rejects_bad_labels() -> None:
    with pytest.raises(InputError):
        sessions([0, 4, 2])
    with pytest.raises(InputError):
        sessions(np.zeros((2, 2)))


def test_labels_roundtrip() -> None:
    spans = [(2, 5), (6, 9), (12, 12)]
    lab = labels_from_sessions(spans, 14)
    assert lab.tolist() == [0, 0, 1, 2, 2, 3, 1, 2, 2, 3, 0, 0, 1, 0]
    assert sessions(lab) == spans
    with pytest.raises(InputError):
        labels_from_sessions([(3, 20)], 10)


def test_jaccard_exact() -> None:
    assert jaccard([(0, 9)], [(5, 14)], 20) == pytest.approx(5 / 15)
    assert jaccard([], [], 10) == 1.0
    assert jaccard([(0, 3)], [], 10) == 0.0


def test_span_match_exact() -> None:
    true = [(10, 50), (60, 100)]
    pred = [(12, 50), (57, 108)]
    # N=0: start 10/12 no, end 50/50 yes, start 60/57 no, end 100/108 no -> 1 of 4.
    c0 = span_match(true, pred, 0)
    assert (c0.matched, c0.predicted, c0.true) == (1, 4, 4)
    assert c0.f1 == pytest.approx(0.25)
    c5 = span_match(true, pred, 5)
    assert c5.matched == 3 and c5.precision == pytest.approx(0.75) and c5.recall == pytest.approx(0.75)
    assert span_match(true, pred, 10).f1 == 1.0


def test_span_match_each_true_boundary_once() -> None:
    # Two predicted sessions crowd one true session: extra boundaries count against precision.
    c = span_match([(10, 20)], [(10, 11), (12, 20)], 5)
    assert (c.matched, c.predicted, c.true) == (2, 4, 2)
    assert c.precision == pytest.approx(0.5) and c.recall == 1.0


def test_span_match_empty_cases() -> None:
    assert span_match([], [], 5).f1 == 1.0
    none_found = span_match([(1, 5)], [], 5)
    assert none_found.recall == 0.0 and none_found.f1 == 0.0
    assert span_match([], [(1, 5)], 5).precision == 0.0


def test_viterbi_obeys_session_grammar() -> None:
    rng = np.random.default_rng(0)
    logp = np.log(rng.dirichlet(np.ones(4), size=300))
    path = viterbi(logp)
    allowed = {(0, 0), (0, 1), (1, 2), (1, 3), (2, 2), (2, 3), (3, 0), (3, 1)}
    assert all((int(a), int(b)) in allowed for a, b in itertools.pairwise(path))
    assert viterbi(np.zeros((0, 4))).size == 0
