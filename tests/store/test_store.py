"""The memory store M: round trips, history, supersession, purge, atomicity, concurrency.

Every test runs on SQLite and, with the `postgres` marker, on PostgreSQL (see conftest.py)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sqlalchemy as sa

from egomem.errors import DimensionError, NotFoundError, StoreError
from egomem.schemas import Episode, Fact, FactKind, Modality, Op, Relation
from egomem.store.base import MemoryStore
from egomem.store.schema import egomem_schema
from egomem.store.sqlite import SQLiteStore

from .conftest import PG_DSN, StoreFactory, all_rows_text


def test_user_round_trip_and_rename(store: MemoryStore) -> None:
    u = store.create_user("Emily")
    assert store.get_user(u.id) == u
    assert store.rename_user(u.id, "  Emily   Chen ").name == "Emily Chen"
    assert [x.id for x in store.find_users_by_name("emily chen")] == [u.id]
    store.touch_user(u.id, 123.0)
    assert store.get_user(u.id).last_seen == 123.0
    ops = [(h.op, h.entity) for h in store.history(u.id)]
    assert ops == [(Op.ADD, "user"), (Op.UPDATE, "user")]


def test_keys_round_trip_and_dimension_checks(store: MemoryStore) -> None:
    u = store.create_user("John")
    v = np.linspace(-1, 1, 128).astype(np.float32)
    k = store.add_key(u.id, Modality.FACE, v, "dlib_resnet_v1", condition="clean")
    got = store.list_keys(Modality.FACE, user_id=u.id)
    assert len(got) == 1 and got[0].id == k.id
    np.testing.assert_array_equal(np.asarray(got[0].vector, dtype=np.float32), v)
    with pytest.raises(DimensionError, match="128"):
        store.add_key(u.id, Modality.FACE, np.zeros(64), "dlib_resnet_v1")
    store.add_key(u.id, Modality.VOICE, np.ones(10), "custom")
    with pytest.raises(DimensionError, match="10 dimensions"):
        store.add_key(u.id, Modality.VOICE, np.ones(11), "custom")
    with pytest.raises(DimensionError, match="NaN"):
        store.add_key(u.id, Modality.VOICE, [1.0, float("nan")] * 5, "custom")
    with pytest.raises(NotFoundError):
        store.add_key("u_missing", Modality.FACE, v, "dlib_resnet_v1")
    assert len(store.list_keys()) == 2  # the refused writes left nothing behind
    store.delete_key(k.id or 0)
    assert store.list_keys(Modality.FACE) == []


def test_fact_supersession_keeps_history(store: MemoryStore) -> None:
    u = store.create_user("Ana")
    old = store.add_fact(Fact(user_id=u.id, text="lives in Lyon", source_text="I live in Lyon"))
    new = store.supersede_fact(old.id, Fact(user_id=u.id, text="lives in Paris"), at=1000.0)
    current = store.list_facts(u.id)
    assert [f.text for f in current] == ["lives in Paris"]
    everything = {f.id: f for f in store.list_facts(u.id, include_history=True)}
    assert everything[old.id].valid_to == 1000.0
    assert everything[old.id].superseded_by == new.id
    upd = [h for h in store.history(u.id) if h.op == Op.UPDATE and h.entity == "fact"]
    assert upd[0].before is not None and upd[0].before["text"] == "lives in Lyon"
    assert upd[0].after is not None and upd[0].after["text"] == "lives in Paris"
    with pytest.raises(StoreError, match="already superseded"):
        store.supersede_fact(old.id, Fact(user_id=u.id, text="lives in Rome"))
    assert [f.text for f in store.list_facts(u.id)] == ["lives in Paris"]


def test_fact_kinds_delete_and_use(store: MemoryStore) -> None:
    u = store.create_user()
    a = store.add_fact(Fact(user_id=u.id, kind=FactKind.PREFERENCE, text="loves tennis"))
    store.add_fact(Fact(user_id=u.id, kind=FactKind.SUMMARY, text="talked about sport"))
    assert [f.text for f in store.list_facts(u.id, kinds=[FactKind.PREFERENCE])] == ["loves tennis"]
    store.mark_facts_used([a.id], at=5.0)
    assert store.get_fact(a.id).use_count == 1 and store.get_fact(a.id).last_used == 5.0
    store.delete_fact(a.id)
    with pytest.raises(NotFoundError):
        store.get_fact(a.id)
    with pytest.raises(StoreError):
        store.add_fact(Fact(user_id=u.id, text="   "))


def test_relations_and_episodes_round_trip(store: MemoryStore) -> None:
    emily, john = store.create_user("Emily"), store.create_user("John")
    r = store.add_relation(Relation(subject_id=john.id, relation="colleague", object_id=emily.id))
    r2 = store.add_relation(Relation(subject_id=emily.id, relation="mother", object_name="Maria"))
    assert {x.id for x in store.list_relations(emily.id)} == {r.id, r2.id}
    store.close_relation(r.id, at=50.0)
    assert [x.id for x in store.list_relations(emily.id)] == [r2.id]
    assert len(store.list_relations(emily.id, include_history=True)) == 2
    with pytest.raises(StoreError):
        store.add_relation(Relation(subject_id=emily.id, relation="friend"))
    ep = store.add_episode(
        Episode(start=1.0, end=9.0, participants=[emily.id], user_transcript="hi I'm Emily", summary="greeting")
    )
    assert store.get_episode(ep.id) == ep
    ep2 = store.update_episode(
        ep.model_copy(update={"summary": "Emily said hello", "participants": [emily.id, john.id]})
    )
    assert ep2.summary == "Emily said hello" and set(ep2.participants) == {emily.id, john.id}
    assert [e.id for e in store.list_episodes(john.id)] == [ep.id]
    with pytest.raises(StoreError):
        store.add_episode(Episode(start=5.0, end=1.0))


def test_merge_placeholder_into_met_user(store: MemoryStore) -> None:
    emily = store.create_user("Emily")
    placeholder = store.create_user("John", placeholder=True)
    store.add_relation(Relation(subject_id=emily.id, relation="colleague", object_id=placeholder.id))
    store.add_fact(Fact(user_id=placeholder.id, text="plays tennis"))
    met = store.create_user(None)
    store.add_key(met.id, Modality.FACE, np.ones(128), "dlib_resnet_v1")
    merged = store.merge_users(met.id, placeholder.id)
    assert merged.name == "John" and not merged.placeholder
    assert [f.text for f in store.list_facts(met.id)] == ["plays tennis"]
    assert store.list_relations(emily.id)[0].object_id == met.id
    with pytest.raises(NotFoundError):
        store.get_user(placeholder.id)


def test_delete_user_purges_every_trace(store_factory: StoreFactory) -> None:
    store = store_factory()
    emily, john = store.create_user("Emily"), store.create_user("Zebedee")
    face = np.full(128, 0.123456, dtype=np.float32)
    store.add_key(john.id, Modality.FACE, face, "dlib_resnet_v1")
    store.add_key(john.id, Modality.VOICE, np.full(256, 0.5), "resemblyzer")
    f = store.add_fact(Fact(user_id=john.id, text="Zebedee loves quidditch"))
    store.supersede_fact(f.id, Fact(user_id=john.id, text="Zebedee loves curling"))
    store.add_relation(Relation(subject_id=emily.id, relation="colleague", object_id=john.id))
    store.add_relation(Relation(subject_id=john.id, relation="friend", object_id=emily.id))
    solo = store.add_episode(Episode(start=0, end=1, participants=[john.id], user_transcript="quidditch talk"))
    shared = store.add_episode(Episode(start=2, end=3, participants=[john.id, emily.id], summary="both"))
    report = store.delete_user(john.id)
    assert report.removed["identity_keys"] == 2 and report.removed["episodes"] == 1
    store.close()

    store = store_factory()
    text = all_rows_text(store)  # every table the backend holds, vectors included
    for trace in (john.id, "Zebedee", "quidditch", "curling", face.tobytes().hex()[:64], solo.id):
        assert trace not in text, f"{trace!r} survived deletion"
    assert [u.id for u in store.list_users()] == [emily.id]
    assert store.get_episode(shared.id).participants == [emily.id]
    assert store.list_relations(emily.id) == []
    assert store.history()[-1].op == Op.DELETE  # the deletion itself is logged, without the person


def test_failed_transaction_rolls_back_everything(store: MemoryStore) -> None:
    with pytest.raises(RuntimeError), store.transaction():
        u = store.create_user("Half")
        store.add_fact(Fact(user_id=u.id, text="should vanish"))
        raise RuntimeError("crash mid-write")
    assert store.list_users() == []
    assert store.history() == []


def test_unknown_ids_raise_not_found(store: MemoryStore) -> None:
    for call in (
        lambda: store.get_user("nope"),
        lambda: store.rename_user("nope", "x"),
        lambda: store.delete_user("nope"),
        lambda: store.get_fact("nope"),
        lambda: store.get_episode("nope"),
        lambda: store.close_relation("nope"),
        lambda: store.delete_key(999),
    ):
        with pytest.raises(NotFoundError):
            call()


def _set_schema_version(store: MemoryStore, backend: str, version: int) -> None:
    if backend == "sqlite":
        assert isinstance(store, SQLiteStore)
        conn = sqlite3.connect(store.path)
        conn.execute(f"PRAGMA user_version = {version}")
        conn.close()
    else:
        with store.transaction():
            store.db.execute(sa.update(egomem_schema).values(version=version))


def test_newer_schema_is_refused(store_factory: StoreFactory, backend: str) -> None:
    s = store_factory()
    _set_schema_version(s, backend, 999)
    s.close()
    with pytest.raises(StoreError, match="newer"):
        store_factory()


def test_unreadable_or_corrupt_store(tmp_path: Path) -> None:
    bad = tmp_path / "m.db"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="cannot open"):
        SQLiteStore(bad)
    assert bad.read_bytes().startswith(b"this is not a database")  # untouched


# A writer process; the store is named as in conftest.open_spec (`sqlite:PATH` or `postgres:SCHEMA`).
WRITER = """
import os, sys, time
import numpy as np
from egomem.schemas import Fact, Modality
spec, tag, n, pause = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
kind, where = spec.split(":", 1)
if kind == "sqlite":
    from egomem.store.sqlite import SQLiteStore
    s = SQLiteStore(where)
else:
    from egomem.store.postgres import PostgresStore
    s = PostgresStore(os.environ["EGOMEM_TEST_PG_DSN"], schema=where)
i = 0
while n < 0 or i < n:  # n < 0: write until killed from outside, possibly mid-transaction
    with s.transaction():
        u = s.create_user(f"{tag}-{i}")
        s.add_fact(Fact(user_id=u.id, text=f"fact {tag} {i}"))
        time.sleep(pause)
        s.add_key(u.id, Modality.VOICE, np.full(256, i, dtype=np.float32), "resemblyzer")
    i += 1
s.close()
"""


def _spawn_writer(spec: str, tag: str, n: int, pause: float = 0.0) -> subprocess.Popen[bytes]:
    env = {**os.environ, "EGOMEM_TEST_PG_DSN": PG_DSN}
    return subprocess.Popen([sys.executable, "-c", WRITER, spec, tag, str(n), str(pause)], env=env)


def _assert_consistent(store_factory: StoreFactory, at_least: int) -> int:
    s: Any = store_factory()
    users = s.list_users()
    assert len(users) >= at_least
    # Every committed user is whole: never a user without its fact and key.
    assert all(len(s.list_facts(u.id)) == 1 and len(s.list_keys(user_id=u.id)) == 1 for u in users)
    s.close()
    if isinstance(s, SQLiteStore):
        assert sqlite3.connect(s.path).execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    return len(users)


def test_two_processes_write_concurrently(store_factory: StoreFactory, store_spec: str) -> None:
    store_factory().close()  # create the schema before the writers race
    procs = [_spawn_writer(store_spec, tag, 60) for tag in ("a", "b")]
    for p in procs:
        assert p.wait(120) == 0
    assert _assert_consistent(store_factory, 120) == 120


def test_killed_writer_leaves_store_consistent(store_factory: StoreFactory, store_spec: str) -> None:
    store_factory().close()
    p = _spawn_writer(store_spec, "w", -1, pause=0.002)
    deadline = time.time() + 60
    while time.time() < deadline:
        time.sleep(0.3)
        probe = store_factory()
        n = len(probe.list_users())
        probe.close()
        if n >= 20:
            break
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    _assert_consistent(store_factory, 20)
