"""The trigger's stream conditions have the label sequences they claim (synthetic pools, no data)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from egomem.errors import InputError
from egomem.memory.trigger.metrics import sessions
from egomem.perception.audio import SAMPLE_RATE
from egomem.perception.vad import Segment
from egomem.stream.clock import SAMPLES_PER_STEP, STEP_S
from egomem_eval.trigger.synth import (
    CONDITIONS,
    LONG_SILENCE_S,
    SAME_USER_GAP_S,
    SpeechPools,
    Stream,
    Utterance,
    make_pair,
    one_word,
)

SEEDS = range(12)


def _noise(rng: np.random.Generator, seconds: float) -> np.ndarray:
    return (0.1 * rng.standard_normal(int(seconds * SAMPLE_RATE))).astype(np.float32)


@pytest.fixture(scope="module")
def pools() -> SpeechPools:
    rng = np.random.default_rng(7)
    segs = [Segment(0.0, 1.2), Segment(1.5, 2.0), Segment(2.3, 4.8), Segment(5.0, 7.5)]
    users = {f"u{i}": [Utterance(_noise(rng, 8.0), segs)] for i in range(3)}
    lines = [Utterance(_noise(rng, s), [Segment(0.0, s)]) for s in (1.2, 2.0, 3.5)]
    return SpeechPools(users, lines, [_noise(rng, 5.0)], [_noise(rng, 6.0)], lines[:1], whole_lines=True)


def _active(x: np.ndarray) -> np.ndarray:
    """Steps with any signal (the clean channels are exactly zero where nobody speaks)."""
    return np.abs(x[: x.size // SAMPLES_PER_STEP * SAMPLES_PER_STEP]).reshape(-1, SAMPLES_PER_STEP).max(axis=1) > 0


def _streams(pools: SpeechPools, cond: str) -> list[Stream]:
    return [make_pair(seed, pools, cond)[0] for seed in SEEDS]


@pytest.mark.parametrize("cond", list(CONDITIONS))
def test_labels_match_sessions_and_grammar(pools: SpeechPools, cond: str) -> None:
    for s in _streams(pools, cond):
        assert sessions(s.labels) == s.sessions and len(s.users) == len(s.sessions) >= 1
        for (a0, b0), (a1, _) in itertools.pairwise(s.sessions):
            assert a0 < b0 < a1  # ordered, not overlapping
        lab = s.labels.tolist()
        for x, y in itertools.pairwise(lab):  # the session grammar the tagger decodes with
            assert (x, y) in {(0, 0), (0, 1), (1, 2), (1, 3), (2, 2), (2, 3), (3, 0), (3, 1)}
        assert s.listen.size == s.speak.size == s.labels.size * SAMPLES_PER_STEP


def test_back_to_back_sessions_are_other_users_with_no_pause(pools: SpeechPools) -> None:
    for s in _streams(pools, "back_to_back"):
        assert len(s.sessions) >= 2
        for ((_, b0), (a1, _)), (u0, u1) in zip(
            itertools.pairwise(s.sessions), itertools.pairwise(s.users), strict=True
        ):
            assert u0 != u1
            assert 1 <= a1 - b0 <= 1 + round(0.2 / STEP_S)  # an end directly followed by the next start
            assert s.labels[b0] == 3 and s.labels[a1] == 1


def test_same_user_sessions_are_split_only_by_a_long_absence(pools: SpeechPools) -> None:
    gaps = []
    for cond in CONDITIONS:
        for s in _streams(pools, cond):
            for ((_, b0), (a1, _)), (u0, u1) in zip(
                itertools.pairwise(s.sessions), itertools.pairwise(s.users), strict=True
            ):
                if u0 == u1:
                    gaps.append((a1 - b0) * STEP_S)
    assert gaps and min(gaps) >= SAME_USER_GAP_S[0] - 2 * STEP_S


def _inside_silences(s: Stream) -> list[float]:
    """The longest run of silence on both channels inside each session, in seconds."""
    quiet = ~(_active(s.listen) | _active(s.speak))
    out = []
    for a, b in s.sessions:
        run = best = 0
        for q in quiet[a : b + 1]:
            run = run + 1 if q else 0
            best = max(best, run)
        out.append(best * STEP_S)
    return out


def test_long_silences_stay_inside_sessions(pools: SpeechPools) -> None:
    long = [x for s in _streams(pools, "long_silence") for x in _inside_silences(s)]
    runtime = [x for s in _streams(pools, "runtime") for x in _inside_silences(s)]
    assert max(runtime) < LONG_SILENCE_S[0]  # ordinary pauses are short
    assert sum(x >= LONG_SILENCE_S[0] - 0.2 for x in long) >= 5  # the condition has long ones, labelled in session
    assert max(long) <= LONG_SILENCE_S[1] + 0.2 < SAME_USER_GAP_S[0]


def _user_turn_lengths(s: Stream) -> list[float]:
    act = _active(s.listen)
    d = np.diff(np.concatenate([[0], act.astype(np.int8), [0]]))
    return [(e - a) * STEP_S for a, e in zip(np.flatnonzero(d == 1), np.flatnonzero(d == -1), strict=True)]


def test_one_word_answers(pools: SpeechPools) -> None:
    words = [x for s in _streams(pools, "one_word") for x in _user_turn_lengths(s)]
    normal = [x for s in _streams(pools, "runtime") for x in _user_turn_lengths(s)]
    assert sum(x <= 0.96 for x in words) >= len(words) // 2  # most turns are one word (0.35-0.8 s + step rounding)
    assert sum(x <= 0.96 for x in normal) <= len(normal) // 4
    x = one_word(np.random.default_rng(0), pools.users["u0"])
    assert 0.3 * SAMPLE_RATE <= x.size <= 0.8 * SAMPLE_RATE and x[0] == 0.0  # faded in


def _outside(s: Stream) -> np.ndarray:
    """Steps at least one step away from every session."""
    inside = s.labels > 0
    return ~(inside | np.roll(inside, 1) | np.roll(inside, -1))


def test_tv_plays_between_sessions(pools: SpeechPools) -> None:
    for s in _streams(pools, "tv"):
        outside = _outside(s)
        assert outside.any() and _active(s.listen)[outside].all()  # someone speaks where no session is
        assert not _active(s.speak)[outside].any()  # ... and the assistant never answers it
    for s in _streams(pools, "runtime"):
        assert not _active(s.listen)[_outside(s)].any()


def test_unknown_condition_is_an_error(pools: SpeechPools) -> None:
    with pytest.raises(InputError, match="unknown stream condition"):
        make_pair(0, pools, "opera")


def test_assistant_lines_are_the_responders_and_split_by_names() -> None:
    from egomem_eval.assistant_lines import responder_lines

    ev, tr = responder_lines("eval"), responder_lines("train")
    for replies, greetings in (ev, tr):
        assert replies and greetings
        assert all(x and "<retr>" not in x and "<answer>" not in x for x in replies + greetings)
        assert "I see. Tell me more." in replies and any(g.startswith("Hi ") for g in greetings)
    assert {"Nice to meet you, Maya."} <= set(ev[0]) and "Nice to meet you, Maya." not in tr[0]
