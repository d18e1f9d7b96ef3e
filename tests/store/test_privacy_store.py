"""Schema 3 (privacy): fact sensitivity, consent events, forgetting facts with their history."""

from __future__ import annotations

import pytest
from tests.store.conftest import all_rows_text

from egomem.errors import StoreError
from egomem.schemas import ConsentEvent, Fact, Sensitivity
from egomem.store.base import MemoryStore


def test_sensitivity_is_stored_and_overridable(store: MemoryStore) -> None:
    anna = store.create_user("Anna")
    fact = store.add_fact(Fact(user_id=anna.id, text="has asthma", sensitivity=Sensitivity.HEALTH))
    assert store.get_fact(fact.id).sensitivity == Sensitivity.HEALTH
    store.set_fact_sensitivity(fact.id, Sensitivity.NONE, cause="you can tell them")
    assert store.get_fact(fact.id).sensitivity == Sensitivity.NONE
    assert store.list_facts(anna.id)[0].sensitivity == Sensitivity.NONE


def test_consent_events_are_exported_and_purged(store: MemoryStore) -> None:
    anna = store.create_user("Anna")
    store.record_consent(ConsentEvent(user_id=anna.id, kind="consent", policy="ask", at=10.0, evidence="Yes, sure"))
    store.record_consent(ConsentEvent(user_id=None, kind="refusal", policy="ask", at=11.0, evidence="No thanks"))
    exported = store.export_user(anna.id)
    assert [(e["kind"], e["evidence"]) for e in exported["consent"]] == [("consent", "Yes, sure")]
    assert [e.evidence for e in store.consent_events(None)] == ["No thanks"]
    report = store.delete_user(anna.id)
    assert report.removed["consent_events"] == 1
    assert store.consent_events(anna.id) == []
    assert anna.id not in all_rows_text(store)


def test_forget_facts_removes_them_with_their_history(store: MemoryStore) -> None:
    anna = store.create_user("Anna")
    old = store.add_fact(Fact(user_id=anna.id, text="sister's wedding is in May"))
    new = store.supersede_fact(old.id, Fact(user_id=anna.id, text="sister's wedding moved to June"))
    keep = store.add_fact(Fact(user_id=anna.id, text="plays tennis"))
    assert store.forget_facts(anna.id, [old.id, new.id], cause="asked to forget a topic") == 2
    assert [f.id for f in store.list_facts(anna.id, include_history=True)] == [keep.id]
    assert "wedding" not in all_rows_text(store)
    ben = store.create_user("Ben")
    with pytest.raises(StoreError):
        store.forget_facts(ben.id, [keep.id])  # one person cannot forget another's facts
    assert store.get_fact(keep.id).text == "plays tennis"
