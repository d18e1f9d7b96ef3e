"""Changes and retractions close the old fact (history kept); a bad model answer never
reaches memory: items naming people or things nobody said are dropped, and a failing
provider falls back to the rules with the reason on the episode."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from egomem.identity.types import Identification, IdentityStatus
from egomem.llm.base import LLMError, LLMProvider, T
from egomem.memory.extractor import MemoryExtractor
from egomem.memory.items import Candidate, ExtractedItem, Extraction, KnownFact, SessionText, Turn, UpdateInput
from egomem.memory.manager import MemoryManager
from egomem.memory.rules_provider import RulesProvider
from egomem.memory.rules_update import decide_rules
from egomem.schemas import Fact
from egomem.store.sqlite import SQLiteStore

T0 = 1_700_000_000.0


def _session(ep: str, *user: str, at: float = T0) -> SessionText:
    turns = [Turn(speaker="user", text=u) for u in user]
    return SessionText(episode_id=ep, start=at, end=at + 60, date="14 November 2023", turns=turns)


def _current(store: SQLiteStore, uid: str) -> list[str]:
    return sorted(f.text for f in store.list_facts(uid) if f.kind.value != "summary")


def test_changes_and_retractions_close_the_old_fact(store: SQLiteStore, encoder: Any) -> None:
    mgr = MemoryManager(store, RulesProvider(), encoder)
    out = mgr.process(
        _session(
            "e1",
            "Hi, I'm Nora.",
            "I work at Acme as an engineer.",
            "Every morning I go running. On weekends I play golf.",
        )
    )
    uid = out.user_id or ""
    assert _current(store, uid) == [
        "goes running every morning",
        "plays golf on weekends",
        "works as an engineer",
        "works at Acme",
    ]
    known = Identification(status=IdentityStatus.KNOWN, user_id=uid)
    mgr.process(_session("e2", "I quit my job at Acme.", "I stopped going running.", at=T0 + 86400), known)
    assert _current(store, uid) == ["plays golf on weekends", "stopped going running"]
    mgr.process(_session("e3", "these days i work as a chef", at=T0 + 2 * 86400), known)
    assert _current(store, uid) == ["plays golf on weekends", "stopped going running", "works as a chef"]
    closed = [f.text for f in store.list_facts(uid, include_history=True) if f.valid_to is not None]
    assert sorted(closed) == ["goes running every morning", "works as an engineer", "works at Acme"]


def _cand(i: int, text: str, **kw: Any) -> Candidate:
    return Candidate(index=i, item=ExtractedItem(kind="fact", text=text, source_text=text, **kw))


def test_retraction_matches_only_what_it_names() -> None:
    facts = [
        KnownFact(id="f1", kind="fact", text="works at Apple"),
        KnownFact(id="f2", kind="preference", text="likes smoked salmon"),
        KnownFact(id="f3", kind="fact", text="smokes every day"),
        KnownFact(id="f4", kind="fact", text="has a dog named Rex"),
        KnownFact(id="f5", kind="fact", text="plays the violin"),
    ]
    cands = [
        _cand(0, "works at Google", retract=True),  # another workplace: nothing to close
        _cand(1, "smoking", retract=True),
        _cand(2, "has a dog", retract=True),
        _cand(3, "plays tennis", retract=True),
        _cand(4, "works as their former job", retract=True, retract_slot=True),  # no job known
        _cand(5, "plays the cello", change=True),  # no slot: added beside, not over the violin
    ]
    plan = decide_rules(UpdateInput(facts=facts, candidates=cands))
    assert [(d.op, d.target) for d in plan.decisions] == [
        ("NOOP", None),
        ("DELETE", "f3"),
        ("DELETE", "f4"),
        ("NOOP", None),
        ("NOOP", None),
        ("ADD", None),
    ]


class ScriptedProvider(LLMProvider):
    """A stand-in model (plumbing test): answers `extract` with a fixed item list, or fails."""

    name = "scripted"

    def __init__(self, items: list[dict[str, Any]] | None = None, error: LLMError | None = None) -> None:
        super().__init__()
        self.items, self.error = items or [], error
        self.rules = RulesProvider()

    def run(self, task: str, payload: BaseModel, schema: type[T]) -> T:
        if self.error is not None:
            raise self.error
        if task == "extract":
            return schema.model_validate(Extraction.model_validate({"items": self.items}).model_dump())
        return self.rules.run(task, payload, schema)


def test_extractor_drops_invented_people_places_numbers_and_questions() -> None:
    said = "Hi! I'm Ana. My sister Maria lives nearby. I live in Porto. Do I like jazz?"
    items = [
        {"kind": "name", "text": "Ana", "source_text": "I'm Ana"},
        {
            "kind": "relation",
            "text": "has a sister named Eva",
            "source_text": "My sister Maria lives nearby",
            "relation": "sister",
            "person": "Eva",
        },
        {
            "kind": "relation",
            "text": "has a sister named Maria",
            "source_text": "My sister Maria lives nearby",
            "relation": "sister",
            "person": "Maria",
        },
        {"kind": "fact", "text": "lives in Lisbon", "source_text": "I live in Porto"},
        {"kind": "fact", "text": "is 31 years old", "source_text": "I live in Porto"},
        {"kind": "preference", "text": "likes jazz", "source_text": "Do I like jazz?"},
        {"kind": "fact", "text": "lives in Porto", "source_text": "I live in Porto"},
    ]
    out = MemoryExtractor(ScriptedProvider(items)).extract(_session("e", said))
    assert [i.text for i in out.items] == ["Ana", "has a sister named Maria", "lives in Porto"]
    reasons = [why for _, why in out.dropped]
    assert reasons == [
        "names 'Eva', who was not mentioned",
        "'Lisbon' was not said",
        "'31' was not said",
        "source is a question",
    ]


def test_failing_provider_falls_back_to_rules_with_the_reason_on_the_episode(store: SQLiteStore, encoder: Any) -> None:
    broken = ScriptedProvider(error=LLMError("malformed JSON", "Expecting ',' at char 41"))
    mgr = MemoryManager(store, broken, encoder, fallback=RulesProvider())
    out = mgr.process(_session("e1", "Hi, I'm Ana and I live in Porto."))
    assert out.ok and store.get_user(out.user_id or "").name == "Ana"
    assert _current(store, out.user_id or "") == ["lives in Porto"]
    assert store.get_episode("e1").status == "done:fallback(malformed JSON)"
    # Without a fallback the session is recorded as failed, for a later retry, and memory is untouched.
    out2 = MemoryManager(store, broken, encoder).process(_session("e2", "I moved to Rome."))
    assert not out2.ok and store.get_episode("e2").status == "failed:malformed JSON"
    assert _current(store, out.user_id or "") == ["lives in Porto"]


def test_extract_alone_uses_the_same_fallback_and_writes_nothing(store: SQLiteStore, encoder: Any) -> None:
    broken = ScriptedProvider(error=LLMError("malformed JSON", "Expecting ',' at char 41"))
    session = _session("e1", "Hi, I'm Ana and I live in Porto.")
    res, status = MemoryManager(store, broken, encoder, fallback=RulesProvider()).extract(session)
    assert status == "done:fallback(malformed JSON)"
    assert [(i.kind, i.text) for i in res.items if i.kind != "summary"] == [("name", "Ana"), ("fact", "lives in Porto")]
    assert store.list_users() == [] and store.list_episodes() == [] and store.history() == []
    with pytest.raises(LLMError):  # no fallback: the caller hears why
        MemoryManager(store, broken, encoder).extract(session)


def test_dropped_items_are_logged_with_the_episode(store: SQLiteStore, encoder: Any) -> None:
    items = [{"kind": "fact", "text": "lives in Lisbon", "source_text": "I live in Porto"}]
    out = MemoryManager(store, ScriptedProvider(items), encoder).process(_session("e1", "I live in Porto."))
    assert out.ok and _current(store, out.user_id or "") == []
    causes = [h.cause for h in store.history(out.user_id) if h.entity == "episode"]
    assert any("'Lisbon' was not said" in c for c in causes)


def test_a_question_naming_a_person_creates_no_placeholder(store: SQLiteStore, encoder: Any) -> None:
    mgr = MemoryManager(store, RulesProvider(), encoder)
    mgr.process(_session("e1", "Hi, I'm Ana.", "do you know my friend lucas he plays tennis"))
    assert [u.name for u in store.list_users()] == ["Ana"]
    store.add_fact(Fact(user_id=store.list_users()[0].id, text="likes tea"))
    assert len(store.list_users()) == 1
