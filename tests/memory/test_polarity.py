"""What the person said has ended is never written as holding (memory/polarity.py): a model's
polarity flip is dropped, and its "no longer ..." item closes the old fact; what they said holds
is never retracted."""

from __future__ import annotations

from typing import Any

import pytest
from tests.memory.test_changes_and_bad_answers import T0, ScriptedProvider, _current, _session

from egomem.identity.types import Identification, IdentityStatus
from egomem.memory.extractor import MemoryExtractor
from egomem.memory.items import ExtractedItem
from egomem.memory.manager import MemoryManager
from egomem.memory.polarity import (
    asserts_what_ended,
    retraction_of,
    retracts_what_holds,
    retracts_what_the_session_holds,
)
from egomem.memory.rules_provider import RulesProvider
from egomem.memory.statements import joke_turns
from egomem.store.sqlite import SQLiteStore


def _item(kind: str, text: str, source: str, **kw: Any) -> ExtractedItem:
    return ExtractedItem(kind=kind, text=text, source_text=source, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kind", "text", "source"),
    [
        ("preference", "enjoys crossword puzzles", "Honestly, I no longer enjoy crossword puzzles."),
        ("preference", "makes cakes", "I don't bake cakes any more."),
        ("fact", "lives in Paris", "I used to live in Paris."),
        ("fact", "plays golf", "Well, I stopped playing golf last year."),
    ],
)
def test_an_item_that_says_an_ended_state_holds_is_caught(kind: str, text: str, source: str) -> None:
    assert asserts_what_ended(_item(kind, text, source))


@pytest.mark.parametrize(
    ("kind", "text", "source"),
    [
        ("preference", "dislikes loud music", "I can't bear loud music."),  # negative, not ended
        ("fact", "is allergic to nuts", "I can't eat nuts."),  # a plain negation is not an ending
        ("preference", "no longer enjoys crossword puzzles", "I no longer enjoy crossword puzzles."),
        ("preference", "loves running", "I used to hate running but now I love it."),  # tie: left alone
        ("preference", "loves jazz", "I stopped smoking, and I love jazz."),  # another clause ended
        ("preference", "enjoys crossword puzzles", "I no longer enjoy crossword puzzles."),  # the retraction
    ],
)
def test_what_holds_or_is_said_negatively_is_left_alone(kind: str, text: str, source: str) -> None:
    retract = text == "enjoys crossword puzzles"
    assert not asserts_what_ended(_item(kind, text, source, retract=retract))


def test_an_ended_item_implies_its_retraction() -> None:
    ended = retraction_of(_item("fact", "no longer makes cakes", "I don't bake cakes any more."))
    assert ended is not None and ended.retract and ended.text == "makes cakes" and ended.kind == "fact"
    assert retraction_of(_item("fact", "makes cakes", "I bake cakes.")) is None
    assert retraction_of(_item("fact", "makes cakes", "x", retract=True)) is None


def test_the_extractor_drops_the_flip_and_retracts_once() -> None:
    said = "Honestly, I no longer enjoy crossword puzzles."
    model = ScriptedProvider(  # a stand-in model (plumbing): the flip a 1.5B model wrote on the dev split
        [
            {"kind": "preference", "text": "no longer enjoys crossword puzzles", "source_text": said},
            {"kind": "preference", "text": "enjoys crossword puzzles", "source_text": said},
        ]
    )
    out = MemoryExtractor(model, supplement=RulesProvider()).extract(_session("e", said))
    held = [(it.text, it.retract) for it in out.items if it.kind == "preference"]
    assert ("enjoys crossword puzzles", False) not in held
    assert held.count(("enjoys crossword puzzles", True)) == 1
    assert ("no longer enjoys crossword puzzles", False) in held
    assert any(c.item.text == "enjoys crossword puzzles" and c.replaced_by is None for c in out.checked)


def test_a_models_no_longer_closes_the_fact_it_paraphrased(store: SQLiteStore, encoder: Any) -> None:
    day1 = [{"kind": "fact", "text": "makes cakes every week", "source_text": "Every week I bake cakes."}]
    first = MemoryManager(store, ScriptedProvider(day1), encoder).process(_session("e1", "Every week I bake cakes."))
    uid = first.user_id
    assert uid and _current(store, uid) == ["makes cakes every week"]
    said = "I don't bake cakes any more."
    day2 = [
        {"kind": "fact", "text": "no longer makes cakes", "source_text": said},
        {"kind": "preference", "text": "makes cakes", "source_text": said},  # the flip
    ]
    known = Identification(status=IdentityStatus.KNOWN, user_id=uid)
    MemoryManager(store, ScriptedProvider(day2), encoder).process(_session("e2", said, at=T0 + 86400), known)
    now = _current(store, uid)
    assert "makes cakes every week" not in now and "makes cakes" not in now
    assert "no longer makes cakes" in now


@pytest.mark.parametrize(
    ("text", "source"),
    [
        ("moved to Paris", "Oh, and we moved to Paris last month."),  # the local model's slip in a demo run
        ("works as a nurse", "I work as a nurse."),
        ("plays tennis", "I still play tennis on Sundays, and I love it."),
    ],
)
def test_a_retraction_of_what_the_source_says_holds_is_caught(text: str, source: str) -> None:
    assert retracts_what_holds(_item("fact", text, source, retract=True))


@pytest.mark.parametrize(
    ("text", "source"),
    [
        ("lives in London", "We moved from London to Paris."),  # "lives" is not said: leaving London
        ("works at the bank", "I quit my job at the bank."),
        ("plays tennis", "I don't play tennis any more."),
        ("eats meat", "I don't eat meat."),
        ("drinks coffee", "I switched from coffee to tea, I drink tea now."),
        ("running", "I switched from running to cycling."),  # the rules' retraction of an activity
    ],
)
def test_a_retraction_its_source_bears_out_is_left_alone(text: str, source: str) -> None:
    assert not retracts_what_holds(_item("fact", text, source, retract=True))
    assert not retracts_what_holds(_item("fact", "moved to Paris", "We moved to Paris."))  # no retraction


def test_a_models_retraction_of_the_news_leaves_the_news(store: SQLiteStore, encoder: Any) -> None:
    day1 = [{"kind": "fact", "text": "lives in London", "source_text": "I live in London."}]
    uid = MemoryManager(store, ScriptedProvider(day1), encoder).process(_session("e1", "I live in London.")).user_id
    assert uid
    said = "Oh, and we moved to Paris last month."
    day2 = [{"kind": "fact", "text": "moved to Paris", "source_text": said, "retract": True}]  # the slip
    known = Identification(status=IdentityStatus.KNOWN, user_id=uid)
    # The default: the rules write the session (London -> Paris), then the model's pass follows.
    manager = MemoryManager(store, ScriptedProvider(day2), encoder, fallback=RulesProvider())
    manager.process(_session("e2", said, at=T0 + 86400), known)
    now = _current(store, uid)
    assert "lives in Paris" in now and "lives in London" not in now


# A dev scenario of `bench conversation` (dev 0), as the user said it.
_JOKING_SESSION = [
    "Good morning, Oscar here, nice to meet you.",
    "I absolutely love gardening.",
    "I'm actually a secret agent. Ha, no, just joking.",
    "I always go to church every Sunday.",
    "I can't stand cucumber.",
    "I don't live in Portland any more, I moved to Barcelona.",
    "I've lost interest in gardening.",
]


@pytest.mark.parametrize(
    "text",
    ["always goes to church every Sunday", "can't stand cucumber", "loves gardening when it holds"],
)
def test_a_retraction_of_what_another_turn_says_holds_is_caught(text: str) -> None:
    turns = [t for t in _JOKING_SESSION if "lost interest" not in t] if "holds" in text else _JOKING_SESSION
    text = text.replace(" when it holds", "")
    # The model quoted the joke as the source: the check on the source alone misses it.
    item = _item("fact", text, "Ha, no, just joking.", retract=True)
    assert not retracts_what_holds(item)
    assert retracts_what_the_session_holds(item, turns, joke_turns(turns))


@pytest.mark.parametrize(
    "text",
    [
        "is a secret agent",  # said in a turn taken back
        "lives in Portland",  # "any more"
        "loves gardening",  # held in one turn, but "lost interest" in another
        "lives in London",  # never mentioned: left to the update agent
    ],
)
def test_a_retraction_the_session_bears_out_is_left_alone(text: str) -> None:
    item = _item("fact", text, "Ha, no, just joking.", retract=True)
    assert not retracts_what_the_session_holds(item, _JOKING_SESSION, joke_turns(_JOKING_SESSION))
    assert not retracts_what_the_session_holds(_item("fact", text, "x"), _JOKING_SESSION, set())  # no retraction


def test_a_models_retractions_after_a_joke_leave_what_the_rules_wrote(store: SQLiteStore, encoder: Any) -> None:
    # The 1.5B model's answer to that session (dev 0 of bench conversation): the joke retracted, and
    # with it things just said as holding, which the update agent then closed. It quotes sources
    # loosely (measured on the same session: "is a big fan of baseball" quoting "I can't stand
    # cucumber."), so each slip here quotes another line. A scripted stand-in model replays it
    # (plumbing mock); the rules write first, as by default.
    slips = [
        {"kind": "fact", "text": "is a secret agent", "source_text": "Ha, no, just joking.", "retract": True},
        {
            "kind": "fact",
            "text": "always goes to church every Sunday",
            "source_text": "I can't stand cucumber.",
            "retract": True,
        },
        {
            "kind": "fact",
            "text": "can't stand cucumber",
            "source_text": "I always go to church every Sunday.",
            "retract": True,
        },
    ]
    manager = MemoryManager(store, ScriptedProvider(slips), encoder, fallback=RulesProvider())
    uid = manager.process(_session("e1", *_JOKING_SESSION[:5])).user_id
    assert uid
    now = _current(store, uid)
    assert any("church" in f for f in now) and any("cucumber" in f for f in now)
    assert not any("secret agent" in f for f in now)
