"""Retention of biometric keys (memory/retention.py) on SQLite and PostgreSQL: a person's face and
voice keys are deleted the configured time after they were last seen, through the store's own
delete (history row, pgvector column gone with the row); facts stay; a dry run changes nothing."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest
import sqlalchemy as sa

from egomem.config import RetentionConfig
from egomem.errors import StoreError
from egomem.memory import retention
from egomem.memory.strength import DAY_S
from egomem.schemas import Fact, FactKind, Modality
from egomem.store.base import MemoryStore

from .conftest import StoreFactory

YEAR = 365 * DAY_S


def enrol(store: MemoryStore, name: str, seed: int) -> str:
    rng = np.random.default_rng(seed)
    u = store.create_user(name)
    for _ in range(2):
        store.add_key(u.id, Modality.FACE, rng.normal(size=128), "dlib_resnet_v1")
    store.add_key(u.id, Modality.VOICE, rng.normal(size=256), "resemblyzer")
    store.add_fact(Fact(user_id=u.id, text=f"{name} likes chess"))
    return u.id


def test_keys_expire_per_modality_after_the_person_was_last_seen(store_factory: StoreFactory) -> None:
    store = store_factory()
    t = time.time()
    gone, seen, new = enrol(store, "Old", 1), enrol(store, "Seen", 2), enrol(store, "New", 3)
    later = t + 4 * YEAR
    store.touch_user(gone, t)  # last seen when enrolled: 4 years before `later`
    store.touch_user(seen, later - 30 * DAY_S)  # seen a month before
    # "New" was never touched: its keys' own times (now) count, so it is 4 years old too, and expires.
    cfg = RetentionConfig(face_keys_days=3 * 365, voice_keys_days=None)  # voice kept: only faces expire

    dry = retention.apply(store, cfg, now=later, dry_run=True)
    assert dry.dry_run and {(e.name, e.modality, len(e.key_ids)) for e in dry.expired} == {
        ("Old", Modality.FACE, 2),
        ("New", Modality.FACE, 2),
    }
    assert len(store.list_keys()) == 9  # a dry run deletes nothing
    assert "Old (" in dry.expired[0].describe(later) + dry.expired[1].describe(later)

    done = retention.apply(store, cfg, now=later)
    assert done.keys == 4
    left = {(k.user_id, k.modality) for k in store.list_keys()}
    assert left == {(gone, Modality.VOICE), (seen, Modality.FACE), (seen, Modality.VOICE), (new, Modality.VOICE)}
    assert [f.text for f in store.list_facts(gone)] == ["Old likes chess"]  # the memory stays, not the biometrics
    deleted = [h for h in store.history(gone) if h.entity == "key" and h.op.value == "DELETE"]
    assert len(deleted) == 2 and all(h.cause.startswith("retention: face keys kept 1095") for h in deleted)
    if store.capabilities.native_vector_search:  # no vector left in the searchable column either
        rows = store.db.fetch(sa.text("SELECT count(*) AS n FROM identity_keys WHERE user_id = :u"), {"u": gone})
        assert rows[0]["n"] == 1
    assert retention.apply(store, cfg, now=later).keys == 0  # nothing more to do

    # A fresh look from another connection (another worker) sees the same keys.
    assert {(k.user_id, k.modality) for k in store_factory().list_keys()} == left


def test_no_limits_keep_every_key(store_factory: StoreFactory) -> None:
    store = store_factory()
    enrol(store, "Ana", 4)
    cfg = RetentionConfig(face_keys_days=None, voice_keys_days=None)
    assert retention.apply(store, cfg, now=time.time() + 50 * YEAR).expired == []
    assert len(store.list_keys()) == 3


def test_a_sleep_pass_on_each_backend(store_factory: StoreFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole pass (consolidation, then retention): a dry run rolls everything back; a real one
    folds, fades and expires; a pass that fails midway keeps nothing of that person's changes."""
    from egomem.config import load_config
    from egomem.memory.sleep_time import sleep_pass
    from egomem.retrieval.encoder import default_encoder

    store = store_factory()
    old = enrol(store, "Old", 5)
    t = time.time()
    for d in range(4):
        store.add_fact(
            Fact(user_id=old, kind=FactKind.SUMMARY, text=f"On day {d}, Old spoke. Topic {d}.", valid_from=t)
        )
    env = {"EGOMEM_MEMORY__KEEP_RECENT_SUMMARIES": "1", "EGOMEM_MEMORY__RETENTION_MIN_STRENGTH": "0.05"}
    cfg = load_config(environ=env)
    tables = ("facts", "identity_keys", "history")
    before = {n: sorted(map(repr, store.dump_table(n))) for n in tables}
    later = t + 4 * YEAR
    dry = sleep_pass(store, default_encoder(), cfg.memory, cfg.retention, now=later, dry_run=True)
    assert {n: sorted(map(repr, store.dump_table(n))) for n in tables} == before
    real_close, calls = store.close_fact, []

    def fail_on_second(*args: Any, **kwargs: Any) -> Fact:  # the connection drops mid-fold
        calls.append(1)
        if len(calls) == 2:
            raise StoreError("lost the connection")
        return real_close(*args, **kwargs)

    monkeypatch.setattr(store, "close_fact", fail_on_second)
    with pytest.raises(StoreError):
        sleep_pass(store, default_encoder(), cfg.memory, cfg.retention, now=later)
    assert {n: sorted(map(repr, store.dump_table(n))) for n in tables} == before
    monkeypatch.undo()
    real = sleep_pass(store, default_encoder(), cfg.memory, cfg.retention, now=later)
    assert real.consolidated[old].folded == dry.consolidated[old].folded and len(real.consolidated[old].folded) == 3
    assert real.retention is not None and real.retention.keys == 3 == (dry.retention.keys if dry.retention else 0)
    assert store.list_keys() == [] and store.list_facts(old, kinds=[FactKind.FACT]) == []


def test_two_workers_never_consolidate_one_person_at_once(store_factory: StoreFactory, backend: str) -> None:
    """A fleet's workers each run the schedule: while one consolidates a person, another skips them."""
    from egomem.config import load_config
    from egomem.memory.consolidate import consolidate
    from egomem.retrieval.encoder import default_encoder

    if backend != "postgres":
        pytest.skip("SQLite: the write transaction (BEGIN IMMEDIATE) already makes the second process wait")
    one, other = store_factory(), store_factory()
    ana = one.create_user("Ana").id
    for d in range(4):
        one.add_fact(Fact(user_id=ana, kind=FactKind.SUMMARY, text=f"On day {d}, Ana spoke. Topic {d}."))
    cfg = load_config(environ={"EGOMEM_MEMORY__KEEP_RECENT_SUMMARIES": "1"}).memory
    with one.transaction():
        assert one.try_lock(f"consolidate:{ana}")
        busy = consolidate(other, ana, default_encoder(), cfg, now=time.time())
    assert busy.skipped and not busy.changed and len(other.list_facts(ana, kinds=[FactKind.SUMMARY])) == 4
    done = consolidate(other, ana, default_encoder(), cfg, now=time.time())  # the lock went with the transaction
    assert not done.skipped and done.summaries_folded == 3
