"""What identity caches ask the store on every poll: the newest key id, and how many users have keys."""

from __future__ import annotations

import numpy as np

from egomem.schemas import Modality
from egomem.store.base import MemoryStore

MODEL = "dlib_resnet_v1"


def test_newest_key_id_grows_with_every_key_and_users_are_counted(store: MemoryStore) -> None:
    assert store.newest_key_id() == 0
    assert store.key_user_ids(Modality.FACE, MODEL) == [] and store.key_count(Modality.FACE, MODEL) == 0
    rng = np.random.default_rng(0)
    users = [store.create_user(f"p{i}").id for i in range(3)]
    seen = []
    for uid in users + users[:1]:
        store.add_key(uid, Modality.FACE, rng.normal(0, 0.1, 128), MODEL)
        seen.append(store.newest_key_id())
    assert seen == sorted(seen) and len(set(seen)) == 4
    assert store.key_count(Modality.FACE, MODEL) == 4
    assert sorted(store.key_user_ids(Modality.FACE, MODEL)) == sorted(users)
    assert len(store.key_user_ids(Modality.FACE, MODEL, limit=2)) == 2  # "at least 2 users" stops at 2
    assert store.key_user_ids(Modality.VOICE, "resemblyzer") == []
