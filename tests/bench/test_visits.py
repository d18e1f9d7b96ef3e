"""bench realtime's visit scoring, on a hand-worked timeline."""

from __future__ import annotations

import pytest

from egomem.bench._visits import Visit, holder_durations, pool, score_visits

VISITS = [Visit(0, 10, "A"), Visit(20, 30, "B"), Visit(40, 50, "A"), Visit(60, 70, "B"), Visit(80, 90, "C")]
SWITCHES: list[tuple[float, str | None]] = [
    (2, "u1"),
    (12, None),
    (22, "u1"),  # B briefly taken for A's user: a wrong switch
    (24, "u2"),
    (32, None),
    (41, "u1"),
    (52, None),
    (61, "u3"),  # B's second visit mostly held by a new user u3: B is split
    (68, "u2"),
    (72, None),
    (81, "u1"),  # C is taken for A's user: u1 stands for two people
]


def test_holder_durations() -> None:
    assert holder_durations(VISITS[1], SWITCHES) == {"u1": 2.0, "u2": 6.0}
    assert holder_durations(VISITS[3], SWITCHES) == {"u3": 7.0, "u2": 2.0}
    assert holder_durations(Visit(100, 110, "D"), SWITCHES) == {"u1": 10.0}  # still held from t=81


def test_score_visits_by_hand() -> None:
    m = score_visits(VISITS, SWITCHES)
    ident = m["identity"]
    # users: u1 <- A, A, C; u2 <- B; u3 <- B  =>  purity (2 + 1 + 1) / 5
    assert ident["purity"] == pytest.approx(0.8)
    # A -> {u1}, B -> {u2, u3}, C -> {u1}
    assert ident["fragmentation"] == pytest.approx(4 / 3)
    # (22, u1) during B's visit, (61, u3) during B's second visit (B's own user is u2), and (81, u1)
    # during C's: u1 is A's (A's two visits against C's one), so C has no user and u1 is wrong for C
    assert ident["wrong_switches"] == 3
    # C's visit is missed: counted as its whole length (10 s), not dropped
    assert m["latencies"] == [2.0, 4.0, 1.0, 8.0, 10.0]
    assert m["level1_correct_latency_s_p50"] == 4.0
    assert m["level1_correct_latency_s_p95"] == pytest.approx(9.6)
    assert m["level1_missed_visits"] == 1


def test_placeholders_are_not_users_and_missed_visits_count() -> None:
    m = score_visits([Visit(0, 10, "A")], [(1, "ph")], placeholders={"ph"})
    assert m["identity"]["users_holding_visits"] == 0 and m["identity"]["purity"] is None
    assert m["level1_missed_visits"] == 1 and m["level1_correct_latency_s_p50"] == 10.0  # the whole visit


def test_a_user_standing_for_two_people_is_a_wrong_answer_for_the_one_it_is_not() -> None:
    """A and B merged into u1: u1 is A's (two visits to one); B's visit under u1 is missed (its whole
    length), and the switch to u1 inside it is wrong; a visit already held by the visitor's user is 0."""
    visits = [Visit(0, 10, "A"), Visit(20, 30, "B"), Visit(40, 50, "A"), Visit(50, 60, "A")]
    m = score_visits(visits, [(3, "u1"), (12, None), (21, "u1"), (32, None), (45, "u1")])
    assert m["latencies"] == [3.0, 10.0, 5.0, 0.0]
    assert m["level1_missed_visits"] == 1 and m["identity"]["wrong_switches"] == 1
    assert m["identity"]["purity"] == pytest.approx(0.75)


def test_a_visit_never_identified_counts_its_length_at_every_percentile() -> None:
    visits = [Visit(0, 10, "A"), Visit(20, 50, "B")]
    m = score_visits(visits, [(2, "u1"), (12, None)])
    assert m["latencies"] == [2.0, 30.0] and m["level1_missed_visits"] == 1
    assert m["level1_correct_latency_s_p95"] == pytest.approx(28.6)


def test_pool_and_spread() -> None:
    a = score_visits(VISITS, SWITCHES) | {"rtf_overall": 0.5}
    b = score_visits(VISITS[:1], SWITCHES[:1]) | {"rtf_overall": 0.7}
    pooled, spread = pool({"0": a, "1": b})
    assert pooled["identity"]["wrong_switches"] == 3
    assert pooled["identity"]["purity"] == pytest.approx(0.9)
    assert pooled["level1_correct_latency_s_p50"] == 3.0  # [2, 4, 1, 8, 10] + [2]
    assert pooled["level1_missed_visits"] == 1
    assert spread["identity.purity"] == [0.8, 1.0] and spread["rtf_overall"] == [0.5, 0.7]
