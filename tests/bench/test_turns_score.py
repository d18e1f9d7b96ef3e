"""bench/_turns.py: a turn written onto another person's user is counted as such (the scorer can fail)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from egomem.bench._turns import WrittenTurn, pool_turns, score_turns


@dataclass(frozen=True)
class L:
    start: float
    end: float
    speaker: str


LINES = [L(0, 4, "A"), L(6, 9, "A"), L(20, 25, "B"), L(27, 30, "B"), L(40, 44, "C")]
OWN = {"A": "uA", "B": "uB"}  # C has no own user
OWNER = {"uA": "A", "uB": "B", "uA2": "A"}


def test_right_turns_are_right() -> None:
    m = score_turns([WrittenTurn(0.2, 3.9, "uA"), WrittenTurn(20.1, 24.8, "uB")], LINES, OWN, OWNER)
    assert (m["written"], m["right"], m["wrong_person"], m["split"]) == (2, 2, 0, 0)
    assert m["unwritten_lines"] == 3


def test_a_turn_on_the_person_who_left_is_a_wrong_person() -> None:
    # B's first line written to A's user (the debounced user had not switched yet)
    m = score_turns([WrittenTurn(6.1, 8.8, "uA"), WrittenTurn(20.2, 24.9, "uA")], LINES, OWN, OWNER)
    assert m["wrong_person"] == 1 and m["right"] == 1 and m["wrong_person_by_voice"] == 0
    assert m["wrong_person_rate"] == pytest.approx(0.5)
    assert m["wrong_person_examples"] == [{"at": 20.2, "speaker": "B", "written_to_person": "A", "how": "polls"}]
    by_voice = score_turns([WrittenTurn(20.2, 24.9, "uA")], LINES, OWN, OWNER, by_voice={24.9: {}})
    assert by_voice["wrong_person_by_voice"] == 1 and by_voice["wrong_person_examples"][0]["how"] == "voice"


def test_second_user_of_the_same_person_or_nobodys_user_is_a_split() -> None:
    turns = [WrittenTurn(0.1, 4.0, "uA2"), WrittenTurn(40.5, 43.0, "u_new"), WrittenTurn(41.0, 43.5, "uA")]
    m = score_turns(turns, LINES, OWN, OWNER)
    # C has no own user: uA (A's) is a wrong person for C's line; u_new (nobody's) is a split
    assert (m["split"], m["wrong_person"], m["right"]) == (2, 1, 0)


def test_turn_over_silence_is_not_in_script_and_pooled_rates_come_from_sums() -> None:
    a = score_turns([WrittenTurn(12.0, 14.0, "uA"), WrittenTurn(0.0, 4.0, "uA")], LINES, OWN, OWNER)
    assert a["not_in_script"] == 1 and a["written"] == 1
    b = score_turns([WrittenTurn(20.0, 25.0, "uA")], LINES, OWN, OWNER)
    pooled = pool_turns([a, b])
    assert pooled["written"] == 2 and pooled["wrong_person"] == 1 and pooled["wrong_person_rate"] == 0.5
    assert pooled["script_lines"] == 10
