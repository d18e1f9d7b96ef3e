"""Identity keys sealed at rest (docs/privacy.md, "Keys at rest"): what the database files hold, what a
wrong or missing master key does, what an altered sealed key or data key does, and what a copy of the
database made before a purge can still give (crypto-shredding)."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa

from egomem.config import load_config
from egomem.errors import ConfigError
from egomem.schemas import Episode, Modality
from egomem.store import open_store
from egomem.store.crypto import FixedKey, KeyFromEnv, MasterKeyError, new_master_key_text
from egomem.store.schema import data_keys, identity_keys
from egomem.store.sqlite import SQLiteStore, keyring_path

from .test_previous_schema import DATA, FACE, ROWS

FACE_MODEL = "dlib_resnet_v1"
KEY_A = FixedKey(b"a" * 32, "key A")
KEY_B = FixedKey(b"b" * 32, "key B")


def _vec(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=128).astype(np.float32)


def _files(path: Path) -> bytes:
    """Every byte SQLite keeps for the store at `path`: the memory and keyring files and their logs."""
    out = b""
    for base in (path, keyring_path(path)):
        for suffix in ("", "-wal", "-journal"):
            f = Path(str(base) + suffix)
            if f.exists():
                out += f.read_bytes()
    return out


def _digests(path: Path) -> dict[str, str]:
    return {
        f.name: hashlib.sha256(f.read_bytes()).hexdigest()
        for f in sorted(path.parent.iterdir())
        if f.name.endswith((".db", "-wal"))
    }


def test_keys_are_sealed_in_the_files_and_open_to_the_same_vectors(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store = SQLiteStore(path)
    try:
        u = store.create_user("Emily")
        v = _vec(1)
        store.add_key(u.id, Modality.FACE, v, FACE_MODEL)
        [key] = store.list_keys()
        np.testing.assert_array_equal(np.asarray(key.vector, np.float32), v)
        assert [m.user_id for m in store.nearest_keys(Modality.FACE, v, 1)] == [u.id]
        raw = _files(path)
        assert v.tobytes()[:64] not in raw  # no 16 consecutive floats of the key anywhere
        # The keyring is a file of its own: the memory database holds no data key.
        [wrapped] = [bytes(r[0]) for r in store.keyring.db.fetch_tuples(sa.select(data_keys.c.wrapped))]
        assert wrapped not in path.read_bytes() + Path(str(path) + "-wal").read_bytes()
        assert oct((tmp_path / "master.key").stat().st_mode & 0o777) == "0o600"
        assert oct(path.stat().st_mode & 0o777) == "0o600"
    finally:
        store.close()


def test_keys_round_trip_on_each_backend(store_factory: object) -> None:
    store = store_factory()  # type: ignore[operator]
    a, b = store.create_user("A"), store.create_user("B")
    va, vb = _vec(2), _vec(3)
    store.add_key(a.id, Modality.FACE, va, FACE_MODEL)
    store.add_key(b.id, Modality.FACE, vb, FACE_MODEL)
    assert {k.user_id: np.asarray(k.vector, np.float32).tobytes() for k in store.list_keys()} == {
        a.id: va.tobytes(),
        b.id: vb.tobytes(),
    }
    assert all(
        bytes(r[0]) not in (va.tobytes(), vb.tobytes())
        for r in store.db.fetch_tuples(sa.select(identity_keys.c.vector))
    )
    assert store.nearest_keys(Modality.FACE, vb, 1)[0].user_id == b.id


# -- the master key ------------------------------------------------------------------------------
def test_a_wrong_master_key_is_one_error_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store = SQLiteStore(path, master_key=KEY_A)
    store.add_key(store.create_user("A").id, Modality.FACE, _vec(4), FACE_MODEL)
    store.close()
    before = _digests(path)
    with pytest.raises(MasterKeyError, match=r"key B is not the one the keyring .* was made with: nothing was read"):
        SQLiteStore(path, master_key=KEY_B)
    assert _digests(path) == before
    reopened = SQLiteStore(path, master_key=KEY_A)  # the right key still opens everything
    assert len(reopened.list_keys()) == 1
    reopened.close()


def test_a_missing_key_file_is_one_error_and_never_replaced(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store = SQLiteStore(path)
    store.add_key(store.create_user("A").id, Modality.FACE, _vec(5), FACE_MODEL)
    store.close()
    (tmp_path / "master.key").unlink()
    before = _digests(path)
    with pytest.raises(MasterKeyError, match=r"master key file .*master.key is missing"):
        SQLiteStore(path)
    assert not (tmp_path / "master.key").exists() and _digests(path) == before


def test_master_key_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    environ = {"EGOMEM_PRIVACY__MASTER_KEY": "env"}
    monkeypatch.delenv("EGOMEM_MASTER_KEY", raising=False)
    with pytest.raises(MasterKeyError, match="EGOMEM_MASTER_KEY is not set"):
        open_store(load_config(data_dir=tmp_path, environ=environ))
    monkeypatch.setenv("EGOMEM_MASTER_KEY", "not a key")
    with pytest.raises(MasterKeyError, match="not 32 bytes"):
        open_store(load_config(data_dir=tmp_path, environ=environ))
    monkeypatch.setenv("EGOMEM_MASTER_KEY", new_master_key_text())
    store = open_store(load_config(data_dir=tmp_path, environ=environ))
    store.add_key(store.create_user("A").id, Modality.FACE, _vec(6), FACE_MODEL)
    store.close()
    assert not (tmp_path / "master.key").exists()  # the environment's key, no file made
    monkeypatch.setenv("EGOMEM_MASTER_KEY", new_master_key_text())  # another key: refused
    with pytest.raises(MasterKeyError, match="EGOMEM_MASTER_KEY is not the one"):
        open_store(load_config(data_dir=tmp_path, environ=environ))
    assert isinstance(KeyFromEnv().where, str)


def test_an_unknown_master_key_source_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"privacy\.master_key = 'kms' is no master key source"):
        open_store(load_config(data_dir=tmp_path, environ={"EGOMEM_PRIVACY__MASTER_KEY": "kms"}))


# -- altered bytes: that person is unknown, everyone else is unaffected -----------------------------
def _two_people(path: Path) -> tuple[SQLiteStore, str, str, np.ndarray, np.ndarray]:
    store = SQLiteStore(path)
    a, b = store.create_user("A").id, store.create_user("B").id
    va, vb = _vec(7), _vec(8)
    store.add_key(a, Modality.FACE, va, FACE_MODEL)
    store.add_key(b, Modality.FACE, vb, FACE_MODEL)
    return store, a, b, va, vb


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 1]) + data[at + 1 :]


def test_an_altered_sealed_key_leaves_that_person_unknown(tmp_path: Path) -> None:
    store, a, b, va, vb = _two_people(tmp_path / "memory.db")
    try:
        row = store.db.first(sa.select(identity_keys.c.id, identity_keys.c.vector).where(identity_keys.c.user_id == a))
        assert row is not None
        altered = _flip(bytes(row["vector"]), 40)
        store.db.execute(sa.update(identity_keys).where(identity_keys.c.id == row["id"]).values(vector=altered))
        assert [k.user_id for k in store.list_keys()] == [b]
        assert [m.user_id for m in store.nearest_keys(Modality.FACE, va, 5)] == [b]  # a is not found
        assert store.nearest_keys(Modality.FACE, vb, 1)[0].distance == 0.0
    finally:
        store.close()


def test_an_altered_data_key_leaves_that_person_unknown(tmp_path: Path) -> None:
    store, a, b, _, vb = _two_people(tmp_path / "memory.db")
    store.close()
    with sqlite3.connect(keyring_path(tmp_path / "memory.db")) as conn:
        [(wrapped,)] = conn.execute("SELECT wrapped FROM data_keys WHERE user_id = ?", (a,))
        conn.execute("UPDATE data_keys SET wrapped = ? WHERE user_id = ?", (_flip(wrapped, 20), a))
    store = SQLiteStore(tmp_path / "memory.db")
    try:
        assert [k.user_id for k in store.list_keys()] == [b]
        assert [m.user_id for m in store.nearest_keys(Modality.FACE, vb, 5)] == [b]
        store.add_key(b, Modality.FACE, _vec(9), FACE_MODEL)  # others still take new keys
        assert len(store.list_keys(user_id=b)) == 2
    finally:
        store.close()


# -- purge: crypto-shredding and the files --------------------------------------------------------------
def test_a_copy_made_before_a_purge_cannot_give_back_the_purged_keys(tmp_path: Path) -> None:
    live = tmp_path / "live" / "memory.db"
    store, a, b, va, vb = _two_people(live)
    store.scrub()  # a backup of a quiet store: everything checkpointed into memory.db
    backup = tmp_path / "backup.db"
    shutil.copy(live, backup)
    store.delete_user(a)
    store.close()
    # The worst case: the old copy put back beside the live keyring, with the master key.
    restored = tmp_path / "restored"
    restored.mkdir()
    shutil.copy(backup, restored / "memory.db")
    shutil.copy(keyring_path(live), keyring_path(restored / "memory.db"))
    shutil.copy(live.parent / "master.key", restored / "master.key")
    old = SQLiteStore(restored / "memory.db")
    try:
        assert {u.id for u in old.list_users()} == {a, b}  # the person's rows are in the copy...
        assert [k.user_id for k in old.list_keys()] == [b]  # ...their keys are not readable
        assert [m.user_id for m in old.nearest_keys(Modality.FACE, va, 5)] == [b]
        np.testing.assert_array_equal(np.asarray(old.list_keys()[0].vector, np.float32), vb)
    finally:
        old.close()
    assert va.tobytes()[:64] not in backup.read_bytes()


def test_after_a_purge_the_files_hold_neither_the_sealed_key_nor_the_data_key(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store, a, b, _, _ = _two_people(path)
    try:
        sealed = bytes(
            store.db.fetch_tuples(sa.select(identity_keys.c.vector).where(identity_keys.c.user_id == a))[0][0]
        )
        wrapped = bytes(
            store.keyring.db.fetch_tuples(sa.select(data_keys.c.wrapped).where(data_keys.c.user_id == a))[0][0]
        )
        sealed_b = bytes(
            store.db.fetch_tuples(sa.select(identity_keys.c.vector).where(identity_keys.c.user_id == b))[0][0]
        )
        store.scrub()
        assert sealed in _files(path) and wrapped in _files(path)  # the scan sees what is there
        store.delete_user(a)
        raw = _files(path)
        assert sealed not in raw and wrapped not in raw
        assert sealed_b in raw  # and only the purged person went
        assert store.keyring.user_ids() == {b}
    finally:
        store.close()


def test_merged_keys_open_and_a_purge_shreds_every_data_key_that_sealed_them(tmp_path: Path) -> None:
    store, a, b, va, vb = _two_people(tmp_path / "memory.db")
    try:
        store.merge_users(a, b)  # a repair: moves b's key by user_id, still sealed under b's data key
        got = sorted(np.asarray(k.vector, np.float32).tobytes() for k in store.list_keys(user_id=a))
        assert got == sorted([va.tobytes(), vb.tobytes()])
        assert store.keyring.user_ids() == {a, b}
        store.delete_user(a)
        assert store.keyring.user_ids() == set()  # b's data key sealed a's keys too: gone with a
    finally:
        store.close()


def test_a_purge_keeps_the_keys_a_split_gave_someone_else(tmp_path: Path) -> None:
    store, a, b, va, _ = _two_people(tmp_path / "memory.db")
    try:
        [ka] = store.list_keys(user_id=a)
        store.add_key(a, Modality.FACE, _vec(11), FACE_MODEL)
        episode = store.add_episode(Episode(start=1, end=2, participants=[a], user_transcript="hello"))
        repair = store.split_user(a, [episode.id], name="C", key_ids=[int(ka.id or 0)])
        c = repair.other_user_id
        store.delete_user(a)  # ka, now c's, was sealed under a's data key: re-sealed under c's first
        [kc] = store.list_keys(user_id=c)
        np.testing.assert_array_equal(np.asarray(kc.vector, np.float32), va)
        assert store.keyring.user_ids() == {b, c}
    finally:
        store.close()


# -- upgrade from plaintext keys -------------------------------------------------------------------------
def test_an_upgraded_store_seals_its_plaintext_keys_without_loss(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    conn = sqlite3.connect(path)
    conn.executescript((DATA / "0001_initial.sql").read_text())
    for sql, params in ROWS:
        conn.execute(sql, params)
    more = [(f"u_{i}", _vec(100 + i)) for i in range(20)]
    for uid, v in more:
        conn.execute("INSERT INTO users VALUES (?, ?, 0, 1.0, NULL)", (uid, uid))
        conn.execute(
            "INSERT INTO identity_keys (user_id, modality, model, dim, vector, condition, created_at)"
            " VALUES (?, 'face', ?, 128, ?, '', 2.0)",
            (uid, FACE_MODEL, v.tobytes()),
        )
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    assert FACE.tobytes()[:64] in path.read_bytes()
    store = SQLiteStore(path)
    try:
        got = {k.user_id: np.asarray(k.vector, np.float32).tobytes() for k in store.list_keys()}
        assert got == {"u_emily": FACE.tobytes(), **{uid: v.tobytes() for uid, v in more}}
        assert {r[0] for r in store.db.fetch_tuples(sa.select(identity_keys.c.sealed))} == {1}
        raw = _files(path)
        assert FACE.tobytes()[:64] not in raw
        assert all(v.tobytes()[:64] not in raw for _, v in more)
    finally:
        store.close()


def test_rotating_the_master_key_rewraps_every_data_key(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store = SQLiteStore(path, master_key=KEY_A)
    a = store.create_user("A").id
    v = _vec(10)
    store.add_key(a, Modality.FACE, v, FACE_MODEL)
    assert store.keyring.rotate(KEY_B) == 1
    store.close()
    with pytest.raises(MasterKeyError, match="key A is not the one"):
        SQLiteStore(path, master_key=KEY_A)
    store = SQLiteStore(path, master_key=KEY_B)
    try:
        np.testing.assert_array_equal(np.asarray(store.list_keys()[0].vector, np.float32), v)
    finally:
        store.close()
