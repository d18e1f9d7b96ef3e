"""Identification over sealed keys (docs/privacy.md, "Keys at rest"): a person whose sealed key was
altered is not recognised, everyone else is, and no key is opened per identification."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa

from egomem.config import Config
from egomem.identity.identifier import PersonIdentifier
from egomem.identity.types import FaceObservation, IdentityStatus
from egomem.schemas import Modality
from egomem.store import crypto
from egomem.store.schema import identity_keys
from egomem.store.sqlite import SQLiteStore


class _NoEncoder:  # identification from observations: no images or audio to encode
    pass


def _face(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=128).astype(np.float32)
    return v / np.linalg.norm(v) * 0.9


def test_an_altered_key_is_unknown_and_identification_opens_no_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SQLiteStore(tmp_path / "memory.db")
    try:
        a, b = store.create_user("A").id, store.create_user("B").id
        fa, fb = _face(1), _face(2)
        store.add_key(a, Modality.FACE, fa, "dlib_resnet_v1")
        store.add_key(b, Modality.FACE, fb, "dlib_resnet_v1")
        row = store.db.first(sa.select(identity_keys.c.id, identity_keys.c.vector).where(identity_keys.c.user_id == a))
        assert row is not None
        altered = bytearray(row["vector"])
        altered[-1] ^= 1  # the GCM tag no longer matches
        store.db.execute(sa.update(identity_keys).where(identity_keys.c.id == row["id"]).values(vector=bytes(altered)))
        ident = PersonIdentifier(
            store, Config(data_dir=tmp_path), face_encoder=_NoEncoder(), voice_encoder=_NoEncoder()
        )  # type: ignore[arg-type]
        opened: list[int] = []
        real_open = crypto.DataKey.open
        monkeypatch.setattr(crypto.DataKey, "open", lambda self, s, c: opened.append(1) or real_open(self, s, c))
        got_b = ident.decide(FaceObservation(fb, (0, 1, 1, 0)), None)
        got_a = ident.decide(FaceObservation(fa, (0, 1, 1, 0)), None)
        assert (got_b.status, got_b.user_id) == (IdentityStatus.KNOWN, b)
        assert got_a.user_id != a and got_a.status != IdentityStatus.KNOWN
        assert opened == []  # the keys were opened once, when the identifier loaded them
    finally:
        store.close()
