"""Evidence weights on facts and relations (schema 2): confirmation +1, contradiction -1 with
the old item closed and kept, the episodes linked, history and export carrying them, on
every backend. Bad calls fail with one clear error and change nothing."""

from __future__ import annotations

import pytest

from egomem.errors import NotFoundError, StoreError
from egomem.schemas import Episode, Fact, Op, Relation
from egomem.store.base import MemoryStore


def _episodes(store: MemoryStore, *ids: str) -> None:
    for i, eid in enumerate(ids):
        store.add_episode(Episode(id=eid, start=float(i), end=float(i) + 1))


def test_a_new_fact_has_support_1_and_its_episode_as_evidence(store: MemoryStore) -> None:
    u = store.create_user("Ana")
    _episodes(store, "e1")
    f = store.add_fact(Fact(user_id=u.id, text="likes tea", source_episode="e1", source_text="I like tea"))
    assert f.support == store.get_fact(f.id).support == 1
    [ev] = store.fact_evidence(f.id)
    assert (ev.episode_id, ev.sign, ev.source_text) == ("e1", 1, "I like tea")


def test_confirmation_raises_support_and_links_the_episode(store: MemoryStore) -> None:
    u = store.create_user("Ana")
    _episodes(store, "e1", "e2", "e3")
    f = store.add_fact(Fact(user_id=u.id, text="likes tea", source_episode="e1", valid_from=0.0))
    store.confirm_fact(f.id, episode_id="e2", at=1.0, source_text="tea again", cause="t")
    after = store.confirm_fact(f.id, episode_id="e3", at=2.0, cause="t")
    assert after.support == store.get_fact(f.id).support == 3
    assert [(e.episode_id, e.sign) for e in store.fact_evidence(f.id)] == [("e1", 1), ("e2", 1), ("e3", 1)]
    noops = [h for h in store.history(u.id) if h.op == Op.NOOP]
    assert [(h.before, (h.after or {}).get("support")) for h in noops] == [({"support": 1}, 2), ({"support": 2}, 3)]


def test_contradiction_lowers_the_old_fact_closes_it_and_keeps_history(store: MemoryStore) -> None:
    u = store.create_user("Ana")
    _episodes(store, "e1", "e2", "e3")
    old = store.add_fact(Fact(user_id=u.id, text="lives in Lyon", source_episode="e1", valid_from=0.0))
    store.confirm_fact(old.id, episode_id="e2", at=1.0)
    new = Fact(user_id=u.id, text="lives in Paris", source_episode="e3", source_text="I moved to Paris", valid_from=2.0)
    store.supersede_fact(old.id, new, at=2.0, contradicted=True, cause="t")
    closed = store.get_fact(old.id)
    assert (closed.support, closed.valid_to, closed.superseded_by) == (1, 2.0, new.id)
    assert [(e.episode_id, e.sign) for e in store.fact_evidence(old.id)] == [("e1", 1), ("e2", 1), ("e3", -1)]
    assert [f.text for f in store.list_facts(u.id)] == ["lives in Paris"]
    assert store.get_fact(new.id).support == 1
    update = next(h for h in store.history(u.id) if h.op == Op.UPDATE)
    assert (update.before or {})["support"] == 2  # the state before the contradiction


def test_retraction_and_ended_relation_count_minus_one(store: MemoryStore) -> None:
    u, v = store.create_user("Ana"), store.create_user("Ben")
    _episodes(store, "e1", "e2")
    f = store.add_fact(Fact(user_id=u.id, text="smokes", source_episode="e1"))
    store.close_fact(f.id, at=5.0, contradicted=True, episode_id="e2", source_text="I quit smoking")
    assert store.get_fact(f.id).support == 0
    r = store.add_relation(
        Relation(subject_id=u.id, relation="friend", object_id=v.id, source_episode="e1", valid_from=0.0)
    )
    assert store.confirm_relation(r.id, episode_id="e2", at=3.0).support == 2
    store.close_relation(r.id, at=6.0, contradicted=True, episode_id="e2")
    [closed] = store.list_relations(u.id, include_history=True)
    assert (closed.support, closed.valid_to) == (1, 6.0)
    assert [e.sign for e in store.relation_evidence(r.id)] == [1, 1, -1]


def test_a_merge_of_duplicates_sums_their_evidence(store: MemoryStore) -> None:
    u = store.create_user("Ana")
    _episodes(store, "e1", "e2")
    a = store.add_fact(Fact(user_id=u.id, text="likes tea", source_episode="e1"))
    b = store.add_fact(Fact(user_id=u.id, text="likes tea a lot", source_episode="e2"))
    survivor = store.supersede_fact(
        a.id, Fact(user_id=u.id, text="likes tea", source_episode="e1"), evidence_from=[a.id, b.id]
    )
    assert survivor.support == store.get_fact(survivor.id).support == 2
    assert sorted(e.episode_id or "" for e in store.fact_evidence(survivor.id)) == ["e1", "e2"]


def test_export_holds_support_and_evidence(store: MemoryStore) -> None:
    u = store.create_user("Ana")
    _episodes(store, "e1", "e2")
    f = store.add_fact(Fact(user_id=u.id, text="likes tea", source_episode="e1", valid_from=0.0))
    store.confirm_fact(f.id, episode_id="e2", at=1.0)
    out = store.export_user(u.id)
    assert out["facts"][0]["support"] == 2
    assert [(e["fact_id"], e["episode_id"], e["sign"]) for e in out["evidence"]] == [(f.id, "e1", 1), (f.id, "e2", 1)]


def test_bad_confirmations_fail_clearly_and_change_nothing(store: MemoryStore) -> None:
    u = store.create_user("Ana")
    _episodes(store, "e1")
    f = store.add_fact(Fact(user_id=u.id, text="likes tea", source_episode="e1"))
    with pytest.raises(NotFoundError, match="unknown fact"):
        store.confirm_fact("f_nope", episode_id="e1", at=1.0)
    with pytest.raises(NotFoundError, match="unknown episode"):
        store.confirm_fact(f.id, episode_id="e_nope", at=1.0)
    with pytest.raises(NotFoundError, match="unknown relation"):
        store.confirm_relation("r_nope", episode_id="e1", at=1.0)
    store.close_fact(f.id, at=2.0)
    with pytest.raises(StoreError, match="only a current fact"):
        store.confirm_fact(f.id, episode_id="e1", at=3.0)
    assert store.get_fact(f.id).support == 1 and len(store.fact_evidence(f.id)) == 1
    assert [h.op for h in store.history(u.id)].count(Op.NOOP) == 0


def test_deleting_a_person_removes_their_evidence(store: MemoryStore) -> None:
    u, v = store.create_user("Ana"), store.create_user("Ben")
    _episodes(store, "e1")
    f = store.add_fact(Fact(user_id=u.id, text="likes tea", source_episode="e1"))
    g = store.add_fact(Fact(user_id=v.id, text="likes coffee", source_episode="e1"))
    report = store.delete_user(u.id)
    assert report.removed["evidence"] == 1
    assert store.fact_evidence(f.id) == [] and len(store.fact_evidence(g.id)) == 1
