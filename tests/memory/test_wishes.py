"""Wishes and plans are stored as plans, never as likings, whichever extractor read them;
"I like tennis" stays a liking."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest

from egomem.llm.base import ChatProvider, ChatReply
from egomem.memory.about_person import WISH_NOT_LIKING
from egomem.memory.items import SessionText, Turn
from egomem.memory.manager import MemoryManager
from egomem.memory.rules_extract import extract_rules
from egomem.memory.rules_provider import RulesProvider
from egomem.memory.wishes import liking_from_wish, plan_in
from egomem.store.sqlite import SQLiteStore

T0 = 1_714_694_400.0  # 3 May 2024


@pytest.mark.parametrize(
    ("sentence", "plan"),
    [
        ("I'd like to learn to play tennis too.", "wants to learn to play tennis"),
        ("I would really love to learn the cello.", "wants to learn the cello"),
        ("I want to try surfing.", "wants to try surfing"),
        ("i really want to learn the guitar", "wants to learn the guitar"),
        ("I'm going to take up golf.", "is going to take up golf"),
        ("i'm gonna start running", "is going to start running"),
        ("We're planning to move to Lyon.", "is planning to move to Lyon"),
        ("I plan on learning to cook.", "plans on learning to cook"),
        ("I hope to run a marathon.", "hopes to run a marathon"),
        ("I can't wait to start my new job.", "wants to start their new job"),
        ("I'm thinking about learning Spanish.", "is thinking about learning Spanish"),
        ("I'm going to visit my sister next week.", "is going to visit their sister in the week after 3 May 2024"),
    ],
)
def test_wishes_and_plans_read_as_plans(sentence: str, plan: str) -> None:
    assert plan_in(sentence, datetime(2024, 5, 3)) == plan


@pytest.mark.parametrize(
    "sentence",
    [
        "I like tennis.",  # a liking, not a wish
        "I'd love to learn the piano if I had time.",  # a condition
        "I'd like to start running someday.",
        "I would like a coffee.",  # a request
        "I'd like to know your name.",
        "I'm going to the gym.",  # a place, not a plan to do something
        "I don't want to learn tennis.",
        "I'm not going to move.",
    ],
)
def test_no_plan_where_none_is_stated(sentence: str) -> None:
    assert plan_in(sentence) is None


def _session(*lines: str, episode_id: str = "e1") -> SessionText:
    """A one-minute session on 3 May 2024 in which the user says `lines`."""
    return SessionText(
        episode_id=episode_id,
        start=T0,
        end=T0 + 60,
        date="3 May 2024",
        turns=[Turn(speaker="user", text=x) for x in lines],
    )


def _rules(*lines: str) -> dict[str, set[str]]:
    session = _session(*lines, episode_id="e")
    out: dict[str, set[str]] = {"fact": set(), "preference": set()}
    for it in extract_rules(session).items:
        if it.kind in out:
            out[it.kind].add(it.text)
    return out


@pytest.mark.parametrize(
    ("said", "fact"),
    [
        ("I'd love to try rock climbing.", "wants to try rock climbing"),
        ("I want to get into photography.", "wants to get into photography"),
        ("We'd like to visit Japan.", "wants to visit Japan"),
        ("i'm going to learn the drums", "is going to learn the drums"),
        ("I can't wait to try the new pool.", "wants to try the new pool"),
    ],
)
def test_the_rules_store_a_plan_not_a_liking(said: str, fact: str) -> None:
    got = _rules(said)
    assert fact in got["fact"]
    assert not any(p.startswith(("likes", "loves", "enjoys")) for p in got["preference"])


def test_the_rules_keep_a_liking_a_liking() -> None:
    got = _rules("I like tennis.", "I really love playing chess.")
    assert got["preference"] == {"likes tennis", "loves playing chess"}


@pytest.mark.parametrize(
    ("liking", "said", "expected"),
    [
        ("likes tennis", ["Do any of my friends play tennis?", "I'd like to learn tennis."], "wants to learn tennis"),
        ("Maya loves surfing", ["I want to try surfing this summer."], "wants to try surfing this summer"),
        ("enjoys golf", ["I'm going to take up golf."], "is going to take up golf"),
        ("likes the piano", ["I'd love to learn the piano if I had time."], None),  # a wish, no plan: dropped
        # A habit whose only evidence is a wish (the local model wrote "plays tennis" in CI).
        (
            "plays tennis",
            ["Do any of my colleagues play tennis?", "I'd like to learn to play tennis too."],
            "wants to learn to play tennis",
        ),
        ("Emily goes surfing", ["I want to try surfing this summer."], "wants to try surfing this summer"),
        ("is a keen golf player", ["I'm going to take up golf."], "is going to take up golf"),
    ],
)
def test_a_liking_whose_only_evidence_is_a_wish(liking: str, said: list[str], expected: str | None) -> None:
    found = liking_from_wish(liking, said)
    assert found is not None and found[0] == expected


@pytest.mark.parametrize(
    ("liking", "said"),
    [
        ("likes tennis", ["I like tennis.", "I'd like to learn to play it better."]),
        ("likes tennis", ["I love tennis, and I'd like to learn to serve."]),
        ("likes jazz", ["I want to try surfing."]),  # the wish is about something else
        ("works as a nurse", ["I want to become a nurse."]),  # not a liking
        # A habit the user does state, beside a wish about it.
        ("plays tennis", ["I played tennis this morning.", "I'd like to learn to play tennis better."]),
        ("goes hiking", ["On weekends I usually go hiking.", "I'd love to go hiking in the Alps."]),
        ("plays tennis", ["I play tennis, and I'd like to learn to serve."]),
    ],
)
def test_a_liking_that_was_said_is_not_touched(liking: str, said: list[str]) -> None:
    assert liking_from_wish(liking, said) is None


class CannedChatModel(ChatProvider):
    """Plumbing mock of a chat model: the real prompt rendering and answer parsing run, `chat`
    answers a fixed extraction (the demo's local model wrote "likes tennis" from a wish)."""

    name = "canned"

    def __init__(self, items: list[dict[str, Any]]) -> None:
        super().__init__(prompt_version=2)
        self.items = items
        self.rules = RulesProvider()

    def chat(self, messages: list[dict[str, str]], json_schema: dict[str, Any], schema_name: str) -> ChatReply:
        return ChatReply(json.dumps({"items": self.items}))

    def run(self, task: str, payload: Any, schema: Any) -> Any:
        return self.rules.run(task, payload, schema) if task == "update" else super().run(task, payload, schema)


def test_a_models_wish_as_liking_is_stored_as_the_plan(store: SQLiteStore, encoder: Any) -> None:
    said = ["Hi, I'm Maya.", "Do any of my colleagues play golf?", "I'd really like to take up golf."]
    items = [
        {"kind": "name", "text": "Maya", "source_text": "I'm Maya"},
        {"kind": "preference", "text": "likes golf", "source_text": "I'd really like to take up golf."},
        {"kind": "preference", "text": "likes playing golf", "source_text": "I'd really like to take up golf."},
    ]
    session = _session(*said)
    out = MemoryManager(store, CannedChatModel(items), encoder, fallback=RulesProvider()).process(session)
    assert out.user_id
    stored = {f.text: f.kind.value for f in store.list_facts(out.user_id) if f.kind.value != "summary"}
    assert stored == {"wants to take up golf": "fact"}
    assert [c.why for c in out.checked] == [WISH_NOT_LIKING, WISH_NOT_LIKING]


def test_a_models_wish_as_habit_is_stored_as_the_plan(store: SQLiteStore, encoder: Any) -> None:
    said = ["Do any of my colleagues play tennis?", "I'd like to learn to play tennis too."]
    items = [
        {"kind": "preference", "text": "plays tennis", "source_text": "I'd like to learn to play tennis too."},
        {
            "kind": "fact",
            "text": "wants to learn to play tennis",
            "source_text": "I'd like to learn to play tennis too.",
        },
    ]
    out = MemoryManager(store, CannedChatModel(items), encoder).process(_session(*said))
    assert out.user_id
    stored = {(f.kind.value, f.text) for f in store.list_facts(out.user_id) if f.kind.value != "summary"}
    assert stored == {("fact", "wants to learn to play tennis")}
    assert [(c.item.text, c.replaced_by, c.why) for c in out.checked] == [("plays tennis", None, WISH_NOT_LIKING)]


def test_a_plan_written_as_a_preference_is_stored_as_a_fact(store: SQLiteStore, encoder: Any) -> None:
    session = _session("I want to try surfing.")
    items = [{"kind": "preference", "text": "wants to try surfing", "source_text": "I want to try surfing."}]
    out = MemoryManager(store, CannedChatModel(items), encoder).process(session)
    assert out.user_id
    assert [(f.kind.value, f.text) for f in store.list_facts(out.user_id)] == [("fact", "wants to try surfing")]


def test_a_models_liking_that_was_said_stays(store: SQLiteStore, encoder: Any) -> None:
    session = _session("I like tennis. I'd like to learn to serve better.")
    items = [{"kind": "preference", "text": "likes tennis", "source_text": "I like tennis."}]
    out = MemoryManager(store, CannedChatModel(items), encoder).process(session)
    assert out.user_id and "likes tennis" in {f.text for f in store.list_facts(out.user_id)}
    assert out.checked == []
