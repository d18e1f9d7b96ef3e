"""Identification through the database (PostgreSQL + pgvector): the key index is chosen by the
store's capabilities; two workers (two PersonIdentifiers, two connections) on one schema see each
other's enrolments and deletions on the next identify; the in-process and database paths agree;
bad vectors leave the store untouched; a database that drops every connection under load loses no
committed key."""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from egomem.config import Config
from egomem.errors import InputError, StoreError
from egomem.identity.identifier import PersonIdentifier
from egomem.identity.index import KeyIndex
from egomem.identity.store_index import StoreKeyIndex
from egomem.identity.types import FaceObservation, IdentityStatus, VoiceObservation
from egomem.perception.face import FACE_DIM, FaceEncoder, load_image
from egomem.perception.voice import VOICE_DIM, VoiceEncoder
from egomem.schemas import Modality
from egomem.store.sqlite import SQLiteStore

PG_DSN = os.environ.get("EGOMEM_TEST_PG_DSN", "")
DATA = Path(__file__).resolve().parents[1] / "data"
pytestmark = [pytest.mark.postgres, pytest.mark.skipif(not PG_DSN, reason="EGOMEM_TEST_PG_DSN is not set")]

psycopg = pytest.importorskip("psycopg")

from egomem.store.postgres import PostgresStore  # noqa: E402


@pytest.fixture
def schema() -> Iterator[str]:
    name = f"t_{uuid.uuid4().hex[:12]}"
    yield name
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


@pytest.fixture
def workers(schema: str) -> Iterator[Callable[[], PostgresStore]]:
    """Opens stores ("workers") on the test's schema; their connections are named after the schema."""
    opened: list[PostgresStore] = []

    def open_worker() -> PostgresStore:
        opened.append(PostgresStore(f"{PG_DSN}?application_name={schema}", schema=schema))
        return opened[-1]

    yield open_worker
    for s in opened:
        s.close()


def _config(tmp: Path, min_enrolled: int = 20) -> Config:
    cfg = Config(data_dir=tmp)
    cfg.voice.min_enrolled_cohort = min_enrolled
    return cfg


def _ident(store: PostgresStore | SQLiteStore, cfg: Config) -> PersonIdentifier:
    # The encoders load their models on first use: these tests hand the identifier observations.
    return PersonIdentifier(store, cfg, face_encoder=FaceEncoder(cfg.face), voice_encoder=VoiceEncoder(cfg.voice))


def _person(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A synthetic person: a face centre (dlib-like scale: other people ~1.0 away) and a voice direction."""
    face = rng.normal(0, 0.09, FACE_DIM).astype(np.float32)
    voice = rng.normal(0, 1, VOICE_DIM).astype(np.float32)
    return face, voice / np.linalg.norm(voice)


def _face(centre: np.ndarray, rng: np.random.Generator, noise: float = 0.02) -> FaceObservation:
    return FaceObservation((centre + rng.normal(0, noise, centre.size)).astype(np.float32), (0, 1, 1, 0))


def _voice(direction: np.ndarray, rng: np.random.Generator, noise: float = 0.03) -> VoiceObservation:
    v = direction + rng.normal(0, noise, direction.size)
    return VoiceObservation((v / np.linalg.norm(v)).astype(np.float32), 4.0)


def test_the_store_capabilities_choose_the_index(workers: Callable[[], PostgresStore], tmp_path: Path) -> None:
    pg = _ident(workers(), _config(tmp_path))
    assert isinstance(pg.face_index, StoreKeyIndex) and isinstance(pg.voice_index, StoreKeyIndex)
    lite_store = SQLiteStore(tmp_path / "m.db")
    lite = _ident(lite_store, _config(tmp_path))
    assert isinstance(lite.face_index, KeyIndex) and isinstance(lite.voice_index, KeyIndex)
    lite_store.close()


def test_a_person_enrolled_on_one_worker_is_recognised_on_the_other(
    workers: Callable[[], PostgresStore], tmp_path: Path
) -> None:
    a, b = _ident(workers(), _config(tmp_path)), _ident(workers(), _config(tmp_path))
    rng = np.random.default_rng(0)
    ann_face, ann_voice = _person(rng)
    assert b.decide(_face(ann_face, rng), None).status == IdentityStatus.NEW  # B has met nobody yet
    uid = a.enroll(None, _face(ann_face, rng), _voice(ann_voice, rng), name="Ann")
    seen = b.decide(_face(ann_face, rng), _voice(ann_voice, rng))  # B's next poll, no restart or sync
    assert seen.status == IdentityStatus.KNOWN and seen.user_id == uid
    assert seen.face_distance is not None and seen.face_distance < 0.6
    # Deleted through A: B's next poll no longer knows her (face or voice alone either).
    a.store.delete_user(uid)
    a.remove_user(uid)
    assert b.decide(_face(ann_face, rng), _voice(ann_voice, rng)).status == IdentityStatus.NEW
    assert b.decide(None, _voice(ann_voice, rng)).status == IdentityStatus.NEW


def test_real_faces_enrolled_on_one_worker_are_identified_on_the_other(
    workers: Callable[[], PostgresStore], tmp_path: Path
) -> None:
    a, b = _ident(workers(), _config(tmp_path)), _ident(workers(), _config(tmp_path))
    b.face_encoder = a.face_encoder  # one model set for both workers: loaded once
    photo = {p.stem: load_image(p) for p in (DATA / "faces").glob("*/*.jpg")}
    ariel = a.enroll(None, a.face_encoder.observe(photo["Ariel_Sharon_0001"]), name="Ariel")
    colin = a.enroll(None, a.face_encoder.observe(photo["Colin_Powell_0001"]), name="Colin")
    assert b.identify(None, [photo["Ariel_Sharon_0002"]]).user_id == ariel
    assert b.identify(None, [photo["Colin_Powell_0002"]]).user_id == colin


def test_snorm_statistics_follow_an_enrolment_on_another_worker(
    workers: Callable[[], PostgresStore], tmp_path: Path
) -> None:
    """B caches s-norm statistics; A enrols someone who sounds like Ann: B's next score is a fresh one."""
    cfg = _config(tmp_path, min_enrolled=3)
    a, b = _ident(workers(), cfg), _ident(workers(), cfg)
    rng = np.random.default_rng(4)
    people = [_person(rng) for _ in range(6)]
    ann = a.enroll(None, voice=_voice(people[0][1], rng))
    for _, voice in people[1:]:
        a.enroll(None, voice=_voice(voice, rng))
    query = _voice(people[0][1], rng).vector
    before = {m.user_id: m.value for m in b.voice_scores(query)}
    assert b._key_stats  # cached
    assert before == {m.user_id: m.value for m in b.voice_scores(query)}
    a.enroll(None, voice=_voice(people[0][1], rng, noise=0.05))  # a sound-alike joins the impostor cohort
    after = {m.user_id: m.value for m in b.voice_scores(query)}
    fresh = {m.user_id: m.value for m in _ident(workers(), cfg).voice_scores(query)}
    assert after[ann] < before[ann] - 0.1  # the new impostor raised both cohorts' means
    assert after == pytest.approx(fresh, abs=1e-6)


def test_the_process_and_database_indexes_agree(workers: Callable[[], PostgresStore], tmp_path: Path) -> None:
    """30 people, two keys each; s-norm with the enrolled cohort (from 5 users): same decisions."""
    cfg = _config(tmp_path, min_enrolled=5)
    db = _ident(workers(), cfg)
    rng = np.random.default_rng(1)
    people = [_person(rng) for _ in range(30)]
    uids = []
    for face, voice in people:
        uid = db.enroll(None, _face(face, rng), _voice(voice, rng))
        db.enroll(uid, _face(face, rng), _voice(voice, rng), condition="second")
        uids.append(uid)
    mem = _ident(workers(), cfg)
    mem.face_index, mem.voice_index = KeyIndex(FACE_DIM, "l2"), KeyIndex(VOICE_DIM, "cosine")
    mem.sync()
    assert len(mem.face_index) == len(db.face_index) == 60
    strangers = [_person(rng) for _ in range(5)]
    for i, (face, voice) in enumerate(people + strangers):
        obs_f, obs_v = _face(face, rng, 0.04), _voice(voice, rng, 0.06)
        for f, v in ((obs_f, obs_v), (obs_f, None), (None, obs_v)):
            got, want = db.decide(f, v), mem.decide(f, v)
            assert (got.status, got.user_id) == (want.status, want.user_id)
            if i < len(people):
                assert got.status == IdentityStatus.KNOWN and got.user_id == uids[i]
            assert got.face_distance == pytest.approx(want.face_distance, abs=1e-4)
            assert got.voice_score == pytest.approx(want.voice_score, abs=1e-3)


def test_bad_vectors_are_refused_and_leave_the_store_untouched(
    workers: Callable[[], PostgresStore], tmp_path: Path
) -> None:
    ident = _ident(workers(), _config(tmp_path))
    rng = np.random.default_rng(2)
    face, voice = _person(rng)
    ident.enroll(None, _face(face, rng), _voice(voice, rng))
    before = (ident.store.list_users(), ident.store.list_keys())
    bad_faces = [np.zeros(64, np.float32), np.full(FACE_DIM, np.nan, np.float32)]
    for bad in bad_faces:
        with pytest.raises(InputError, match=r"dimension|NaN"):
            ident.enroll(None, FaceObservation(bad, (0, 1, 1, 0)), _voice(voice, rng))
        with pytest.raises(InputError, match=r"dimension|NaN"):
            ident.decide(FaceObservation(bad, (0, 1, 1, 0)), None)
    with pytest.raises(InputError, match="zero vector"):
        ident.enroll(None, voice=VoiceObservation(np.zeros(VOICE_DIM, np.float32), 3.0))
    with pytest.raises(InputError, match="dimension"):
        ident.decide(None, VoiceObservation(np.ones(VOICE_DIM + 1, np.float32), 3.0))
    assert (ident.store.list_users(), ident.store.list_keys()) == before


def _terminate_all(schema: str) -> int:
    """What a server restart does to every client: each backend of this test's workers goes away."""
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s", (schema,)
        ).fetchall()
    return len(rows)


def test_every_connection_dropped_under_load_loses_no_committed_key(
    workers: Callable[[], PostgresStore], schema: str, tmp_path: Path
) -> None:
    cfg = _config(tmp_path, min_enrolled=3)
    a, b = _ident(workers(), cfg), _ident(workers(), cfg)
    rng = np.random.default_rng(3)
    people = [_person(rng) for _ in range(8)]
    known = {a.enroll(None, _face(f, rng), _voice(v, rng)): (f, v) for f, v in people}
    committed: list[str] = []  # users whose enrolment returned: their keys must all be there
    errors: list[str] = []  # StoreErrors raised to the callers (allowed: they must be clear)
    failures: list[BaseException] = []  # anything else fails the test
    stop = threading.Event()
    last_ok: dict[str, float] = {}

    def run(name: str, step: Callable[[np.random.Generator], None]) -> None:
        r = np.random.default_rng(abs(hash(name)) % 2**32)
        while not stop.is_set():
            try:
                step(r)
                last_ok[name] = time.monotonic()
            except StoreError as exc:
                errors.append(str(exc))
                time.sleep(0.02)
            except BaseException as exc:  # collected and failed on below
                failures.append(exc)
                return

    def enrol(r: np.random.Generator) -> None:
        f, v = _person(r)
        committed.append(a.enroll(None, _face(f, r), _voice(v, r)))

    def identify(ident: PersonIdentifier) -> Callable[[np.random.Generator], None]:
        def step(r: np.random.Generator) -> None:
            uid, (f, v) = list(known.items())[int(r.integers(len(known)))]
            got = ident.decide(_face(f, r), _voice(v, r))
            if got.user_id != uid:
                raise AssertionError(f"identified {got.user_id} ({got.status}), expected {uid}")

        return step

    threads = [
        threading.Thread(target=run, args=("enrol", enrol)),
        threading.Thread(target=run, args=("identify-a", identify(a))),
        threading.Thread(target=run, args=("identify-b", identify(b))),
    ]
    for t in threads:
        t.start()
    terminated = 0
    for _ in range(3):
        time.sleep(1.0)
        terminated += _terminate_all(schema)
    time.sleep(1.5)  # every thread must work again after the last cut
    cut = time.monotonic() - 1.5
    stop.set()
    for t in threads:
        t.join(timeout=30)
    assert not failures, failures
    assert errors and terminated >= 2  # both workers' connections were cut
    assert all(last_ok.get(name, 0) > cut for name in ("enrol", "identify-a", "identify-b")), last_ok
    assert all("connect" in e for e in errors), errors  # one clear line: the connection was lost
    check = workers()
    stored = {k.user_id for k in check.list_keys(Modality.FACE)} & {k.user_id for k in check.list_keys(Modality.VOICE)}
    assert committed and set(committed) <= stored
