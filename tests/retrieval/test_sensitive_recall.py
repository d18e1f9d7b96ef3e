"""Sensitive facts stay out of Level 1 and Level 2 while someone else is present (docs/privacy.md)."""

from __future__ import annotations

from egomem.identity.types import Identification, IdentityStatus
from egomem.retrieval.encoder import default_encoder
from egomem.retrieval.process import RetrievalProcess
from egomem.schemas import Fact, Relation, Sensitivity
from egomem.store.sqlite import SQLiteStore


def test_level1_and_level2_leave_sensitive_facts_out_while_someone_else_is_present(store: SQLiteStore) -> None:
    anna, dan = store.create_user("Anna"), store.create_user("Dan")
    store.add_fact(Fact(user_id=anna.id, text="is allergic to penicillin", sensitivity=Sensitivity.HEALTH))
    store.add_fact(Fact(user_id=anna.id, text="loves gardening"))
    store.add_fact(Fact(user_id=dan.id, text="is allergic to peanuts", sensitivity=Sensitivity.HEALTH))
    store.add_relation(Relation(subject_id=anna.id, relation="brother", object_id=dan.id))
    t = [1000.0]
    proc = RetrievalProcess(store, encoder=default_encoder(), clock=lambda: t[0])
    for _ in range(2):
        proc.observe(Identification(IdentityStatus.KNOWN, user_id=anna.id))
    alone1 = proc.level1_chunk().text
    alone2 = proc.retrieve(["brother"], ["allergic"]).text
    assert "penicillin" in alone1 and "gardening" in alone1 and "peanuts" in alone2
    proc.heard_speaker(dan.id)  # Dan speaks: he is present
    with_dan = proc.level1_chunk().text
    assert "penicillin" not in with_dan and "gardening" in with_dan and "Also here: Dan" in with_dan
    proc.answering(None)
    assert "peanuts" not in proc.retrieve(["brother"], ["allergic"]).text
