"""Memory strength (forgetting curve, reinforcement) and consolidation on a real store."""

from __future__ import annotations

from egomem.memory.config import MemoryConfig
from egomem.memory.consolidate import RUNNING_PREFIX, consolidate, consolidate_all
from egomem.memory.strength import DAY_S, strength
from egomem.schemas import Fact, FactKind
from egomem.store.sqlite import SQLiteStore

T0 = 1_700_000_000.0


def test_strength_decays_and_is_reinforced(store: SQLiteStore) -> None:
    u = store.create_user("Ana")
    f = store.add_fact(Fact(user_id=u.id, text="likes tea", valid_from=T0, importance=0.5))
    assert strength(f, T0) == 1.0
    week, month = strength(f, T0 + 7 * DAY_S), strength(f, T0 + 30 * DAY_S)
    assert 0.0 < month < week < 1.0
    important = f.model_copy(update={"importance": 1.0})
    assert strength(important, T0 + 7 * DAY_S) > week
    store.mark_facts_used([f.id], T0 + 20 * DAY_S)
    used = store.get_fact(f.id)
    assert used.use_count == 1 and strength(used, T0 + 30 * DAY_S) > month
    closed = store.close_fact(f.id, at=T0 + 31 * DAY_S)
    assert strength(closed, T0 + 31 * DAY_S) == 0.0


def test_consolidation_merges_duplicates_and_folds_summaries(store: SQLiteStore, encoder) -> None:
    u = store.create_user("Ana")
    a = store.add_fact(Fact(user_id=u.id, text="likes green tea", valid_from=T0, use_count=2))
    b = store.add_fact(Fact(user_id=u.id, text="likes green tea a lot", valid_from=T0 + 1, importance=0.9))
    store.add_fact(Fact(user_id=u.id, text="works as a pilot", valid_from=T0 + 2))
    for d in range(7):
        text = f"On day {d}, Ana talked with the assistant. Ana: topic number {d}."
        store.add_fact(Fact(user_id=u.id, kind=FactKind.SUMMARY, text=text, valid_from=T0 + d * DAY_S))
    cfg = MemoryConfig(keep_recent_summaries=5)
    rep = consolidate(store, u.id, encoder, cfg, now=T0 + 10 * DAY_S)
    assert (rep.merged, rep.summaries_folded, rep.purged) == (1, 2, 0)
    facts = store.list_facts(u.id, kinds=[FactKind.PREFERENCE, FactKind.FACT])
    tea = [f for f in facts if "tea" in f.text]
    assert len(tea) == 1 and tea[0].text == "likes green tea" and tea[0].use_count == 2 and tea[0].importance == 0.9
    assert store.get_fact(b.id).superseded_by == tea[0].id and store.get_fact(a.id).valid_to is not None
    summaries = store.list_facts(u.id, kinds=[FactKind.SUMMARY])
    running = [s for s in summaries if s.text.startswith(RUNNING_PREFIX)]
    assert len(summaries) == 6 and len(running) == 1 and "topic number 0" in running[0].text
    # Nothing is erased: every original row is still in the history view.
    assert len(store.list_facts(u.id, include_history=True)) == 3 + 7 + 2


def test_no_deletion_by_decay_without_a_retention_policy(store: SQLiteStore, encoder) -> None:
    u = store.create_user("Ana")
    store.add_fact(Fact(user_id=u.id, text="went to a concert", valid_from=T0, importance=0.0))
    store.add_fact(Fact(user_id=u.id, text="is allergic to peanuts", valid_from=T0, importance=1.0))
    years = T0 + 3 * 365 * DAY_S
    assert consolidate(store, u.id, encoder, MemoryConfig(), now=years).purged == 0
    assert len(store.list_facts(u.id)) == 2
    rep = consolidate(store, u.id, encoder, MemoryConfig(retention_min_strength=0.001), now=T0 + 60 * DAY_S)
    assert rep.purged == 1 and [f.text for f in store.list_facts(u.id)] == ["is allergic to peanuts"]


def test_consolidate_all_skips_placeholders(store: SQLiteStore, encoder) -> None:
    ana, ph = store.create_user("Ana"), store.create_user("Zoe", placeholder=True)
    for u in (ana, ph):
        store.add_fact(Fact(user_id=u.id, text="likes green tea", valid_from=T0))
        store.add_fact(Fact(user_id=u.id, text="likes green tea a lot", valid_from=T0 + 1))
    reports = consolidate_all(store, encoder, MemoryConfig(), now=T0 + DAY_S)
    assert list(reports) == [ana.id] and reports[ana.id].merged == 1
    assert len(store.list_facts(ph.id)) == 2
