"""Details after the object are not part of it: how long ("for six years"), where exactly
("not far from the river"), with whom — cased Whisper text and lower-case ASR text alike."""

from __future__ import annotations

import pytest

from egomem.memory.items import SessionText, Turn
from egomem.memory.rules_extract import extract_rules


def _facts(text: str) -> set[str]:
    session = SessionText(episode_id="e", start=0, end=1, date="1 May 2026", turns=[Turn(speaker="user", text=text)])
    return {it.text.lower() for it in extract_rules(session).items if it.kind == "fact"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "I've been working as a nurse at the city hospital for six years now.",
            {"works as a nurse", "works at the city hospital"},
        ),
        ("i have been working as a welder for ten years", {"works as a welder"}),
        ("i work at the bakery for a few months now", {"works at the bakery"}),
        ("I have worked for Siemens since 2019.", {"works at siemens"}),
        ("i live in london not far from the river", {"lives in london"}),
        ("I live in Rio de Janeiro with my wife.", {"lives in rio de janeiro"}),
        ("we moved to new york city two years ago", {"lives in new york city"}),
        ("I live near the station, in Leeds.", set()),
    ],
)
def test_duration_and_place_details_are_cut(text: str, expected: set[str]) -> None:
    facts = {f for f in _facts(text) if f.startswith(("works", "lives"))}
    assert facts == expected


def _kinds(text: str) -> dict[str, set[str]]:
    session = SessionText(episode_id="e", start=0, end=1, date="1 May 2026", turns=[Turn(speaker="user", text=text)])
    out: dict[str, set[str]] = {"fact": set(), "preference": set()}
    for it in extract_rules(session).items:
        if it.kind in out:
            out[it.kind].add(it.text.lower())
    return out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I'd like to learn to play tennis too.", {"wants to learn to play tennis"}),
        ("i'd like to learn to play tennis too", {"wants to learn to play tennis"}),
        ("I want to learn Spanish.", {"wants to learn spanish"}),
        ("We'd really like to take up sailing.", {"wants to take up sailing"}),
        # Wishes stay wishes: a condition, "someday", or no plan to learn anything.
        ("I'd love to learn the piano if I had time.", set()),
        ("I'd like to start running someday.", set()),
        ("I would like a coffee.", set()),
        ("I'd like to learn to fly one day", set()),
    ],
)
def test_plans_to_learn_are_goals_wishes_are_not(text: str, expected: set[str]) -> None:
    got = _kinds(text)
    assert got["fact"] == expected and got["preference"] == set()  # a plan, never a liking
