"""Linking named people: graph context picks among namesakes, placeholders, exclusive relation words."""

from __future__ import annotations

from egomem.memory.items import ExtractedItem
from egomem.memory.social import adopt_name, link_relation, resolve_person
from egomem.schemas import Episode, Op, Relation
from egomem.store.sqlite import SQLiteStore


def _rel(word: str, person: str, *, user_is_subject: bool = True) -> ExtractedItem:
    return ExtractedItem(
        kind="relation",
        text=f"has a {word} named {person}",
        source_text=f"{person} is my {word}",
        relation=word,
        person=person,
        user_is_subject=user_is_subject,
    )


def _episodes(store: SQLiteStore, *ids: str) -> None:
    for i in ids:  # relations name their source episode, which must exist
        store.add_episode(Episode(id=i, start=0.0, end=1.0))


def test_namesakes_resolved_by_graph_context(store: SQLiteStore) -> None:
    ana = store.create_user("Ana")
    john1, john2 = store.create_user("John"), store.create_user("John")
    store.add_relation(Relation(subject_id=ana.id, relation="friend", object_id=john2.id))
    assert resolve_person(store, ana.id, "john", cause="t").id == john2.id
    bob = store.create_user("Bob")
    assert resolve_person(store, bob.id, "John", cause="t").id == john1.id  # no context: the earliest real John
    new = resolve_person(store, bob.id, "Zoe", cause="t")
    assert new.placeholder and new.name == "Zoe"


def test_relation_words_replace_within_their_group(store: SQLiteStore) -> None:
    u = store.create_user("Sam")
    _episodes(store, "e1", "e2", "e3")
    link_relation(store, u.id, _rel("friend", "Ana"), episode_id="e1", at=1.0, cause="t")
    link_relation(store, u.id, _rel("colleague", "Ana"), episode_id="e1", at=1.0, cause="t")
    assert link_relation(store, u.id, _rel("colleague", "Ana"), episode_id="e2", at=2.0, cause="t") is None
    # "I am Ana's boyfriend now": Ana -boyfriend-> Sam replaces the friendship, keeps the colleague edge.
    link_relation(store, u.id, _rel("boyfriend", "Ana", user_is_subject=False), episode_id="e3", at=3.0, cause="t")
    current = sorted((r.relation, r.subject_id == u.id) for r in store.list_relations(u.id))
    assert current == [("boyfriend", False), ("colleague", True)]
    closed = [r for r in store.list_relations(u.id, include_history=True) if r.relation == "friend"]
    assert closed[0].valid_to == 3.0
    assert Op.NOOP in [h.op for h in store.history(u.id)]
    ana = store.find_users_by_name("Ana")
    assert len(ana) == 1 and ana[0].placeholder  # one placeholder reused, not one per mention


def test_adopt_name_merges_placeholder_and_keeps_a_known_name(store: SQLiteStore) -> None:
    sam = store.create_user("Sam")
    _episodes(store, "e1")
    link_relation(store, sam.id, _rel("colleague", "Ana"), episode_id="e1", at=1.0, cause="t")
    met = store.create_user(None)
    assert adopt_name(store, met.id, "Ana", cause="t") == "named, placeholder merged"
    assert [u.id for u in store.find_users_by_name("Ana")] == [met.id]
    assert store.list_relations(sam.id)[0].object_id == met.id
    assert adopt_name(store, met.id, "Anna", cause="t") == "name differs"
    assert store.get_user(met.id).name == "Ana"


def test_a_relation_naming_the_speaker_is_kept_out(store: SQLiteStore) -> None:
    sophie = store.create_user("Sophie")
    _episodes(store, "e1")
    users_before = len(store.list_users(include_placeholders=True))
    assert link_relation(store, sophie.id, _rel("sister", "sophie"), episode_id="e1", at=1.0, cause="t") is None
    assert store.list_relations(sophie.id) == []
    assert len(store.list_users(include_placeholders=True)) == users_before  # no stand-in "Sophie"
    # Another name, even one that starts like hers, is a relation as usual.
    assert link_relation(store, sophie.id, _rel("sister", "Sophia"), episode_id="e1", at=1.0, cause="t") is not None
