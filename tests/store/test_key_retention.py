"""Retention of biometric keys (memory/retention.py) on SQLite and PostgreSQL: a person's face and
voice keys are deleted the configured time after they were last seen, through the store's own
delete (history row, pgvector column gone with the row); facts stay; a dry run changes nothing."""

from __future__ import annotations

import time

import numpy as np
import sqlalchemy as sa

from egomem.config import RetentionConfig
from egomem.memory import retention
from egomem.memory.strength import DAY_S
from egomem.schemas import Fact, Modality
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
