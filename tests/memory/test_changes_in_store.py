"""Changes of state end to end (rules extractor + rules update agent + SQLite store): the old
fact is closed with its history, the new one is written, nothing is written from a
retraction of nothing, and a paraphrase of a current fact is not added again."""

from __future__ import annotations

from typing import Any

import pytest

from egomem.identity.types import Identification, IdentityStatus
from egomem.memory.items import (
    Candidate,
    Decision,
    ExtractedItem,
    KnownFact,
    SessionText,
    Turn,
    UpdateInput,
    UpdatePlan,
)
from egomem.memory.manager import MemoryManager
from egomem.memory.rules_provider import RulesProvider
from egomem.memory.rules_update import decide_rules
from egomem.memory.updater import _checked
from egomem.retrieval.social import candidates_for
from egomem.store.sqlite import SQLiteStore

T0 = 1_700_000_000.0
DAY = 86400.0


def _session(ep: str, *user: str, at: float) -> SessionText:
    turns = [Turn(speaker="user", text=u) for u in user]
    return SessionText(episode_id=ep, start=at, end=at + 60, date="14 November 2023", turns=turns)


def _current(store: SQLiteStore, uid: str) -> list[str]:
    return sorted(f.text for f in store.list_facts(uid) if f.kind.value != "summary")


def _closed(store: SQLiteStore, uid: str) -> list[str]:
    return sorted(f.text for f in store.list_facts(uid, include_history=True) if f.valid_to is not None)


def _two_sessions(store: SQLiteStore, encoder: Any, first: str, then: str) -> str:
    mgr = MemoryManager(store, RulesProvider(), encoder)
    uid = mgr.process(_session("e1", "Hi, I'm Nora.", first, at=T0)).user_id or ""
    known = Identification(status=IdentityStatus.KNOWN, user_id=uid)
    mgr.process(_session("e2", then, at=T0 + DAY), known)
    return uid


@pytest.mark.parametrize(
    ("first", "then", "now", "closed"),
    [
        (
            "I work as a teacher.",
            "I used to work as a teacher, now I'm a nurse.",
            ["works as a nurse"],
            ["works as a teacher"],
        ),
        ("I live in Paris.", "I no longer live in Paris.", [], ["lives in Paris"]),
        ("I live in Lyon.", "We moved from Lyon to Paris last month.", ["lives in Paris"], ["lives in Lyon"]),
        (
            "Every morning I go running.",
            "I switched from running to cycling.",
            ["switched to cycling"],
            ["goes running every morning"],
        ),
        ("I play the piano every day.", "I used to play the piano.", [], ["plays the piano every day"]),
        ("I love opera.", "I no longer enjoy opera.", ["no longer enjoys opera"], ["loves opera"]),
        (
            "I work as a software engineer.",
            "I stopped working as a software engineer. I've become a dentist.",
            ["works as a dentist"],
            ["works as a software engineer"],
        ),
        ("I live in Warsaw.", "I left Warsaw and moved to Berlin.", ["lives in Berlin"], ["lives in Warsaw"]),
    ],
)
def test_a_change_closes_the_old_fact_with_history_and_writes_the_new(
    store: SQLiteStore, encoder: Any, first: str, then: str, now: list[str], closed: list[str]
) -> None:
    uid = _two_sessions(store, encoder, first, then)
    assert _current(store, uid) == now
    assert _closed(store, uid) == closed


@pytest.mark.parametrize("said", ["I no longer live in Paris.", "I used to work as a teacher.", "I stopped running."])
def test_a_retraction_of_nothing_known_writes_no_fact_of_the_old_state(
    store: SQLiteStore, encoder: Any, said: str
) -> None:
    uid = _two_sessions(store, encoder, "I like jazz.", said)
    current = _current(store, uid)
    assert "lives in Paris" not in current and "works as a teacher" not in current and "running" not in current
    assert _closed(store, uid) == []


# Paraphrases of a current fact, and what the rules update agent does with each: a NOOP
# (slot rule or cosine >= 0.88 with MiniLM) or, where neither catches it, a second fact.
PARAPHRASES = [
    ("I enjoy green tea.", "I like green tea."),  # preference slot
    ("Every morning I go running.", "I go running every morning."),  # same text
    ("I have a dog called Rex.", "I have a dog named Rex."),  # cosine 0.98
    ("I love hiking.", "I really like hiking."),  # preference slot
    ("I live in Paris.", "I'm living in Paris."),  # residence slot
]


@pytest.mark.parametrize(("first", "then"), PARAPHRASES)
def test_a_paraphrase_of_a_current_fact_is_not_added_again(
    store: SQLiteStore, encoder: Any, first: str, then: str
) -> None:
    mgr = MemoryManager(store, RulesProvider(), encoder)
    uid = mgr.process(_session("e1", "Hi, I'm Nora.", first, at=T0)).user_id or ""
    before = _current(store, uid)
    mgr.process(_session("e2", then, at=T0 + DAY), Identification(status=IdentityStatus.KNOWN, user_id=uid))
    assert len(_current(store, uid)) == len(before) == 1


def _cand(i: int, text: str, similar: list[tuple[str, str, float]] | None = None, **kw: Any) -> Candidate:
    sim = similar or []
    return Candidate(
        index=i,
        item=ExtractedItem(kind="fact", text=text, source_text=text, **kw),
        similar=[KnownFact(id=f, kind="fact", text=t) for f, t, _ in sim],
        similarity=[s for _, _, s in sim],
    )


def test_an_opposite_statement_is_never_a_duplicate_however_close() -> None:
    """ "no longer lives in Paris" is 0.855 from "lives in Paris" with MiniLM: a threshold a
    little lower would have confirmed the fact the user just ended."""
    facts = [KnownFact(id="f1", kind="fact", text="smokes every day")]
    cands = [_cand(0, "no longer smokes", [("f1", "smokes every day", 0.95)])]
    plan = decide_rules(UpdateInput(facts=facts, candidates=cands))
    assert [(d.op, d.target) for d in plan.decisions] == [("ADD", None)]


def test_the_change_not_the_retraction_replaces_a_fact_both_name() -> None:
    facts = [KnownFact(id="f1", kind="fact", text="works as a teacher")]
    cands = [_cand(0, "works as a teacher", retract=True), _cand(1, "works as a nurse", change=True)]
    plan = decide_rules(UpdateInput(facts=facts, candidates=cands))
    assert [(d.op, d.target) for d in plan.decisions] == [("NOOP", "f1"), ("UPDATE", "f1")]


@pytest.mark.parametrize(
    ("said", "word"),
    [("I'm Tom's brother.", "sibling"), ("Tom and I are siblings.", "sibling"), ("Tom's my sister.", "sister")],
)
def test_an_inverse_plural_or_possessive_relation_reaches_the_graph(
    store: SQLiteStore, encoder: Any, said: str, word: str
) -> None:
    """Read from the user's side: Tom is the user's <word> (an incoming "brother" edge reads
    as "sibling", Tom's gender unsaid). The name said as "Tom's" counts as said."""
    mgr = MemoryManager(store, RulesProvider(), encoder)
    uid = mgr.process(_session("e1", "Hi, I'm Nora.", said, at=T0)).user_id or ""
    assert [(c.person, c.relation) for c in candidates_for(store, uid)] == [("Tom", word)]


@pytest.mark.parametrize(
    ("known", "said", "op"),
    [
        ("lives in Paris", "lives in Paris, France", "NOOP"),  # the same place, more words
        ("works at Google", "works at Google Inc", "NOOP"),
        ("lives in New York", "lives in York", "UPDATE"),  # another place whose name it ends
        ("lives in Paris", "lives in Lyon", "UPDATE"),
    ],
)
def test_a_slot_value_said_with_more_words_is_the_same_value(known: str, said: str, op: str) -> None:
    facts = [KnownFact(id="f1", kind="fact", text=known)]
    plan = decide_rules(UpdateInput(facts=facts, candidates=[_cand(0, said)]))
    assert [(d.op, d.target) for d in plan.decisions] == [(op, "f1")]


def test_a_model_plan_that_closes_and_updates_one_fact_keeps_the_update() -> None:
    """The same guard on any provider's plan (updater._checked): a close first would leave the
    update no target, and the new state would never be written."""
    facts = [KnownFact(id="f1", kind="fact", text="works as a teacher")]
    cands = [_cand(0, "works as a teacher", retract=True), _cand(1, "works as a nurse", change=True)]
    inp = UpdateInput(facts=facts, candidates=cands)
    plan = UpdatePlan(
        decisions=[Decision(index=0, op="DELETE", target="f1"), Decision(index=1, op="UPDATE", target="f1")]
    )
    assert [(d.op, d.target) for d in _checked(plan, inp, {"f1"}).decisions] == [("NOOP", "f1"), ("UPDATE", "f1")]
