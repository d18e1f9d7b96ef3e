"""The rule-based update decisions and the updater's plan checks."""

from __future__ import annotations

import pytest

from egomem.llm.base import LLMError
from egomem.memory.items import Candidate, Decision, ExtractedItem, KnownFact, UpdateInput, UpdatePlan
from egomem.memory.rules_update import decide_rules
from egomem.memory.slots import slot_of
from egomem.memory.updater import _checked


def _c(i: int, text: str, *, retract: bool = False, similar: tuple[tuple[str, str, float], ...] = ()) -> Candidate:
    item = ExtractedItem(kind="fact", text=text, source_text=text, retract=retract)
    return Candidate(
        index=i,
        item=item,
        similar=[KnownFact(id=fid, kind="fact", text=t) for fid, t, _ in similar],
        similarity=[s for _, _, s in similar],
    )


FACTS = [
    KnownFact(id="f1", kind="fact", text="lives in Lyon"),
    KnownFact(id="f2", kind="preference", text="likes coffee"),
    KnownFact(id="f3", kind="fact", text="has a dog named Rex"),
    KnownFact(id="f4", kind="fact", text="is allergic to peanuts"),
]


def _ops(*cands: Candidate) -> list[tuple[str, str | None]]:
    plan = decide_rules(UpdateInput(facts=FACTS, candidates=list(cands), duplicate_cosine=0.88))
    return [(d.op, d.target) for d in plan.decisions]


def test_slots() -> None:
    assert slot_of("lives in Paris") == slot_of("Caroline lives in Paris")
    a, b = slot_of("likes coffee"), slot_of("dislikes coffee")
    assert a is not None and b is not None and a.key == b.key == "pref:coffee" and a.value != b.value
    assert slot_of("went to a concert") is None


def test_changed_value_supersedes_same_value_is_noop() -> None:
    assert _ops(_c(0, "lives in Paris")) == [("UPDATE", "f1")]
    assert _ops(_c(0, "lives in Lyon")) == [("NOOP", "f1")]
    assert _ops(_c(0, "dislikes coffee")) == [("UPDATE", "f2")]


def test_non_exclusive_slots_add() -> None:
    assert _ops(_c(0, "is allergic to shellfish")) == [("ADD", None)]
    assert _ops(_c(0, "is allergic to peanuts")) == [("NOOP", "f4")]


def test_retraction_and_near_duplicate() -> None:
    assert _ops(_c(0, "has a dog named Rex", retract=True)) == [("DELETE", "f3")]
    assert _ops(_c(0, "owns a car", retract=True)) == [("NOOP", None)]
    dup = _c(0, "went hiking in the Alps", similar=(("f9", "went hiking in the alps", 0.97),))
    assert _ops(dup) == [("NOOP", "f9")]
    far = _c(0, "went to a concert", similar=(("f1", "lives in Lyon", 0.2),))
    assert _ops(far) == [("ADD", None)]


def test_contradiction_within_one_session_keeps_the_last() -> None:
    assert _ops(_c(0, "lives in Berlin"), _c(1, "lives in Paris")) == [("NOOP", None), ("UPDATE", "f1")]


def test_plan_check_refuses_unknown_targets_and_fills_gaps() -> None:
    inp = UpdateInput(facts=FACTS, candidates=[_c(0, "lives in Paris"), _c(1, "likes tea")])
    with pytest.raises(LLMError, match="invalid update plan"):
        _checked(UpdatePlan(decisions=[Decision(index=0, op="UPDATE", target="nope")]), inp, {"f1"})
    with pytest.raises(LLMError, match="unknown item"):
        _checked(UpdatePlan(decisions=[Decision(index=7, op="ADD")]), inp, {"f1"})
    plan = _checked(UpdatePlan(decisions=[Decision(index=0, op="UPDATE", target="f1")]), inp, {"f1"})
    assert [(d.index, d.op) for d in plan.decisions] == [(0, "UPDATE"), (1, "NOOP")]
    assert plan.decisions[1].reason == "no decision returned"
