"""PostgreSQL: the searchable `embedding` copy of a key is plaintext (the HNSW index must see it), so a
purge must leave no copy in the table's or the indexes' files. Reads the server's relation files
(the local test server of scripts/postgres.sh: EGOMEM_PG_DIR, default /tmp/egomem-pg) after a purge
and `scrub`, and shows that without `scrub` the deleted bytes are still there."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa

from egomem.schemas import Modality
from egomem.store.crypto import FixedKey

from .conftest import PG_DSN

pytestmark = [pytest.mark.postgres, pytest.mark.skipif(not PG_DSN, reason="EGOMEM_TEST_PG_DSN is not set")]
PG_DIR = Path(os.environ.get("EGOMEM_PG_DIR", "/tmp/egomem-pg"))
PG_PORT = os.environ.get("EGOMEM_PG_PORT", "55432")
PG_BIN = Path(os.environ.get("EGOMEM_PG_BIN", "/usr/lib/postgresql/15/bin"))
RELATIONS = ("identity_keys", "data_keys")


def _checkpoint() -> None:
    """Flush every dirty page to the files (CHECKPOINT needs a superuser: the server's own, by its socket)."""
    psql = ["runuser", "-u", "postgres", "--", str(PG_BIN / "psql"), "-h", str(PG_DIR), "-p", PG_PORT, "-U", "postgres"]
    done = subprocess.run([*psql, "-d", "postgres", "-c", "CHECKPOINT"], capture_output=True, timeout=60)
    if done.returncode != 0:
        pytest.skip(f"cannot CHECKPOINT the test server as postgres: {done.stderr.decode().strip()[:200]}")


def _relation_files(store: object) -> dict[str, bytes]:
    """The files of the key and keyring tables and of every index on them (all segments, all forks), by name."""
    db = store.db  # type: ignore[attr-defined]
    names = list(RELATIONS)
    for table in RELATIONS:
        query = "SELECT indexname FROM pg_indexes WHERE tablename = :t AND schemaname = current_schema()"
        names += [str(r[0]) for r in db.fetch_tuples(sa.text(query), {"t": table})]
    out = {}
    for name in names:
        [(rel,)] = db.fetch_tuples(sa.text("SELECT pg_relation_filepath(:n)"), {"n": name})
        out[name] = b"".join(f.read_bytes() for f in sorted(PG_DIR.glob(f"{rel}*")))  # segments, _fsm, _vm
    return out


def _relation_bytes(store: object) -> bytes:
    _checkpoint()
    return b"".join(_relation_files(store).values())


def test_purge_then_scrub_leaves_no_vector_in_the_relation_files(schema: str) -> None:
    from egomem.store.postgres import PostgresStore

    if not os.access(PG_DIR / "base", os.R_OK):
        pytest.skip(f"cannot read the test server's files in {PG_DIR} (run as root beside scripts/postgres.sh)")
    store = PostgresStore(PG_DSN, schema=schema, master_key=FixedKey(b"k" * 32))
    try:
        a, b = store.create_user("A").id, store.create_user("B").id
        rng = np.random.default_rng(0)
        va, vb = (rng.normal(size=128).astype(np.float32) for _ in range(2))
        store.add_key(a, Modality.FACE, va, "dlib_resnet_v1")
        store.add_key(b, Modality.FACE, vb, "dlib_resnet_v1")
        _checkpoint()
        files = _relation_files(store)  # the positive control: the scan finds a key in the table and its index
        assert va.tobytes() in files["identity_keys"] and va.tobytes() in files["identity_keys_face_hnsw"]
        store.delete_user(a)
        # A DELETE only marks the row dead: its bytes stay in the table's file until a rewrite.
        assert va.tobytes() in _relation_bytes(store)
        store.scrub()
        raw = _relation_bytes(store)
        assert va.tobytes()[:64] not in raw  # not even 16 consecutive floats, in the table or an index
        files = _relation_files(store)
        assert vb.tobytes() in files["identity_keys"] and vb.tobytes() in files["identity_keys_face_hnsw"]
        assert [m.user_id for m in store.nearest_keys(Modality.FACE, vb, 5)] == [b]
        assert store.db.fetch_tuples(sa.text("SELECT count(*) FROM data_keys"))[0][0] == 1
    finally:
        store.close()
