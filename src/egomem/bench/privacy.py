"""`egomem bench privacy`: scripted sessions through the product's privacy path, each checked by a table scan.

People are real: the face (LFW, two photos: one seen first, one later) and the voice (LibriSpeech
test-other, two utterances) of three people under the data root, embedded by the product's encoders;
identities are decided by the product's PersonIdentifier from those observations, polls go through
the RetrievalProcess (debounce, Level 1, Level 2) with the product's ConsentGate as its enroller,
turns through PrivacyTurns (the agent's privacy hook), memory through the MemoryManager (rules
extractor: sensitivity decided at extraction), `ask` through the Asker. What the audio loop adds (VAD,
ASR, turn attribution) is not exercised here: a turn is given as its text and the voice it was
attributed to. After each session every table is scanned (every cell as text, vectors as float32 hex).

Checks (each on SQLite, and on PostgreSQL when `--set dsn=` or EGOMEM_TEST_PG_DSN names one):
- a person who refused, or never answered, leaves no user row and no face or voice vector;
- a yes from another person than the one asked enrols nobody;
- a verified "forget me" leaves 0 rows and 0 vectors of that person, and the next poll enrols nothing;
- "forget me" from a voice that is not the person in view erases nothing; said as a joke or quoted, nothing;
- sensitive facts reach no Level-1 or Level-2 chunk while a second person is present, and no other person's `ask`;
- the consent dialog adds at most 1 turn per new person;
- a backup of the store taken before a "forget me", put back beside the live keyring and master key, gives
  back none of the person's face or voice keys (SQLite: crypto-shredding, docs/privacy.md "Keys at rest";
  PostgreSQL keeps plaintext vectors for its index, so its old backups do hold them: the check fails there,
  as the docs say).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from egomem.bench import BenchOptions, BenchResult, data_root, register
from egomem.config import AskConfig, Config
from egomem.errors import InputError
from egomem.identity.consent_gate import ConsentGate
from egomem.identity.identifier import PersonIdentifier
from egomem.identity.types import FaceObservation, Identification, IdentityStatus, VoiceObservation
from egomem.memory.items import SessionText, Turn
from egomem.memory.manager import MemoryManager
from egomem.memory.rules_provider import RulesProvider
from egomem.privacy.consent import QUESTION, ConsentPolicy
from egomem.privacy.erase import CONFIRM_LINE, REFUSE_LINE
from egomem.retrieval.ask import Asker
from egomem.retrieval.dense import EmbeddingCache
from egomem.retrieval.encoder import TextEncoder, default_encoder
from egomem.retrieval.process import RetrievalProcess
from egomem.runtime.privacy_turns import UNKNOWN, PrivacyTurns
from egomem.schemas import Relation, new_id
from egomem.store.base import MemoryStore

FACES = "faces_lfw_subset_10x10"
VOICES = "speech_librispeech_test_other_10spk"
# Who is who: three LFW people and three LibriSpeech speakers (two photos / utterances each).
CAST = (("Anna", "Colin_Powell", "1688"), ("Ben", "Donald_Rumsfeld", "1998"), ("Dan", "Ariel_Sharon", "2033"))


@dataclass
class Person:
    name: str
    faces: tuple[FaceObservation, FaceObservation]  # first seen, seen later
    voices: tuple[VoiceObservation, VoiceObservation]

    def hexes(self) -> list[str]:
        """Every vector of this person as the float32 hex a table scan shows."""
        vecs = [o.vector for o in (*self.faces, *self.voices)]
        return [np.asarray(v, "<f4").tobytes().hex() for v in vecs]


def _cast(data: Path) -> dict[str, Person]:
    from egomem.media import load_audio
    from egomem.perception.face import FaceEncoder, load_image
    from egomem.perception.voice import VoiceEncoder

    faces_dir, voices_dir = data / FACES / "images", data / VOICES
    if not faces_dir.is_dir() or not voices_dir.is_dir():
        raise InputError(f"bench privacy needs {FACES} and {VOICES} under {data}")
    fe, ve = FaceEncoder(), VoiceEncoder()
    out = {}
    for name, face_who, speaker in CAST:
        faces = [fe.observe(load_image(p)) for p in sorted((faces_dir / face_who).glob("*.jpg"))[:2]]
        voices = [ve.observe(load_audio(p)) for p in sorted((voices_dir / speaker).glob("*.flac"))[:2]]
        f = [o for o in faces if o is not None]
        v = [o for o in voices if o is not None]
        if len(f) < 2 or len(v) < 2:
            raise InputError(f"bench privacy: could not embed two faces and two voices of {face_who}/{speaker}")
        out[name] = Person(name, (f[0], f[1]), (v[0], v[1]))
    return out


class _Scan:
    """Every cell of every table as text (vectors as float32 hex), as tests/store's scan."""

    def __init__(self, store: MemoryStore) -> None:
        out: list[str] = []
        for table in store.table_names():
            for row in store.dump_table(table):
                for c in row:
                    if isinstance(c, bytes | memoryview):
                        out.append(bytes(c).hex())
                    elif hasattr(c, "to_numpy"):
                        out.append(np.asarray(c.to_numpy(), dtype="<f4").tobytes().hex())
                    else:
                        out.append(str(c))
        self.text = "\n".join(out)
        self.keys = len(store.list_keys())

    def has_vector_of(self, person: Person) -> bool:
        return any(h in self.text for h in person.hexes())


class _Run:
    """One scripted visit day: the product's privacy path over one store."""

    def __init__(self, store: MemoryStore, config: Config, cast: dict[str, Person], text: TextEncoder) -> None:
        self.store, self.cast, self.text = store, cast, text
        self.identifier = PersonIdentifier(store, config)
        self.gate = ConsentGate(self.identifier, ConsentPolicy.ASK)
        self.t = time.time()
        self.retrieval = RetrievalProcess(
            store, None, enroller=self.gate, config=config.retrieval, encoder=text, clock=lambda: self.t
        )
        self.privacy = PrivacyTurns(store, self.gate, self.identifier, clock=lambda: self.t)
        self.said: list[str] = []
        self.retrieval.subscribe(self._on_chunk)
        self.manager = MemoryManager(store, RulesProvider(), text, config.memory, update_provider=RulesProvider())

    def _on_chunk(self, ev: Any) -> None:
        if ev.level == 1:
            line = self.privacy.on_person(self.retrieval.current_user())
            if line is not None:
                self.said.append(line)

    def see(self, name: str, which: int = 0, polls: int = 3) -> str | None:
        """`name` in front of the camera, speaking, for `polls` polls; returns the current user."""
        p = self.cast[name]
        for _ in range(polls):
            self.t += 2.0
            ident: Identification = self.identifier.decide(p.faces[which], p.voices[which])
            self.privacy.observed(ident)
            self.retrieval.observe(ident, self.t)
        return self.retrieval.current_user()

    def say(self, text: str, voice_user: str | None = None) -> str | None:
        self.t += 1.0
        handled = self.privacy.on_turn(text, self.retrieval.current_user(), voice_user)
        if handled is not None:
            self.said.append(handled.say)
        return None if handled is None else handled.say

    def remember(self, user_id: str, *lines: str) -> None:
        """One session of `user_id`'s turns through the memory manager (the agent's memory round)."""
        self.t += 60.0
        turns = [Turn(speaker="user", text=x, start=self.t + i, end=self.t + i + 1) for i, x in enumerate(lines)]
        session = SessionText(
            episode_id=new_id("e"), start=self.t, end=self.t + 30, date="1 May 2026", turns=turns, user_name=None
        )
        outcome = self.manager.process(session, Identification(IdentityStatus.KNOWN, user_id=user_id))
        if not outcome.ok:
            raise InputError(f"bench privacy: memory round failed: {outcome.reason}")


Check = tuple[str, bool, str]


def _scenario(run: _Run) -> list[Check]:
    checks: list[Check] = []
    cast = run.cast

    def check(what: str, ok: bool, detail: str = "") -> None:
        checks.append((what, bool(ok), detail))

    # 1. Anna meets the robot under `ask`: nothing stored until she agrees; one question.
    pending = run.see("Anna")
    scan = _Scan(run.store)
    check("before consent: no biometric row", scan.keys == 0 and not scan.has_vector_of(cast["Anna"]), f"{pending}")
    questions = run.said.count(QUESTION)
    run.say("Yes, that's fine.")
    anna = run.gate.resolve(pending)
    scan = _Scan(run.store)
    check("consent: enrolled with her keys", anna is not None and scan.keys >= 1 and anna in scan.text)
    check("consent dialog adds <= 1 turn per new person", questions == 1, f"{questions} question(s)")
    assert anna is not None
    events = run.store.consent_events(anna)
    check("consent event with time and evidence", [e.evidence for e in events] == ["Yes, that's fine."])
    # 2. Ben appears beside her; Anna (by her voice) says yes for him: not his consent.
    ben_pending = run.see("Ben")
    reply = run.say("Yes, sure, go ahead.", voice_user=anna)
    scan = _Scan(run.store)
    check(
        "a yes from another person enrols nobody",
        run.gate.is_pending(ben_pending) and not scan.has_vector_of(cast["Ben"]),
        reply or "",
    )
    run.say("No thanks, I'd rather you didn't.")
    run.see("Ben", which=1)  # seen again later in the visit: recognised in memory, not asked again
    scan = _Scan(run.store)
    refusals = [e for e in run.store.consent_events(None) if e.kind == "refusal"]
    check(
        "refused: no biometric row, refusal kept without biometrics",
        not scan.has_vector_of(cast["Ben"]) and len(refusals) == 1 and run.said.count(QUESTION) == 2,
        f"{len(refusals)} refusal event(s); {run.said.count(QUESTION)} question(s)",
    )
    # 3. Dan is asked and never answers: nothing of him is kept.
    run.see("Dan")
    run.say("What's the weather like today?")
    scan = _Scan(run.store)
    check("never answered: no biometric row", not scan.has_vector_of(cast["Dan"]))
    run.say("Sure, you can remember me.")
    dan = run.gate.resolve(run.retrieval.current_user())
    assert dan is not None
    # 4. Sensitivity decided at extraction; recall respects who is listening.
    run.remember(anna, "I'm allergic to penicillin.")
    run.remember(anna, "I love gardening.")
    run.remember(dan, "I'm allergic to peanuts.")
    run.store.add_relation(
        Relation(subject_id=anna, relation="brother", object_id=dan), cause="bench: Dan is her brother"
    )
    sensitive = [f.text for u in (anna, dan) for f in run.store.list_facts(u) if f.sensitivity != "none"]
    check("sensitivity decided at extraction", len(sensitive) >= 2, "; ".join(sensitive))
    run.see("Anna", which=1)
    alone = run.retrieval.level1_chunk().text
    level2_alone = run.retrieval.retrieve(["brother"], ["allergic", "peanuts"]).text
    run.retrieval.heard_speaker(dan, run.t)  # Dan speaks: a second person is present
    with_dan = run.retrieval.level1_chunk().text
    level2 = run.retrieval.retrieve(["brother"], ["allergic", "peanuts"]).text
    leaked = [s for s in sensitive if s in with_dan or s in level2]
    check(
        "no sensitive fact in Level 1/2 while a second person is present",
        "penicillin" in alone and "peanuts" in level2_alone and not leaked and "gardening" in with_dan,
        f"leaked: {leaked}" if leaked else "Level 1 and Level 2 hold them with nobody else there; with Dan, not",
    )
    asker = Asker(run.store, EmbeddingCache(run.text), AskConfig(llm=False), None)
    by_anna = " ".join(it.quote for it in asker.ask("What is Dan allergic to?", user_id=anna).evidence)
    by_dan = " ".join(it.quote for it in asker.ask("What am I allergic to?", user_id=dan).evidence)
    check("ask: another person's sensitive fact is left out", "peanut" not in by_anna and "peanut" in by_dan)
    # 5. "Forget me" that must not erase anyone.
    run.retrieval.answering(None)
    before = _Scan(run.store)
    joke = run.say("She said forget me, haha.")
    quoted = run.say('The song goes "forget me, forget me not".')
    stranger = run.say("Forget me.", voice_user=UNKNOWN)  # a voice nobody enrolled has, in front of Anna
    other = run.say("Please forget me.", voice_user=dan)  # Dan's voice while Anna is in view
    after = _Scan(run.store)
    check("joke or quote: nothing erased", joke is None and quoted is None and after.keys == before.keys)
    check(
        "forget-me from another person's voice erases nobody",
        stranger == REFUSE_LINE and other in (REFUSE_LINE, CONFIRM_LINE) and after.text == before.text,
        f"unknown voice: refused; Dan's voice: {'refused' if other == REFUSE_LINE else 'asked to confirm'}",
    )
    # 6. Forget a topic, then forget me, verified by face and voice.
    run.see("Anna", which=1)
    topic = run.say("Please forget what I said about gardening.")
    facts_and_history = "\n".join(
        str(c) for table in ("facts", "history") for row in run.store.dump_table(table) for c in row
    )
    check("forget a topic: its facts and their history go", "gardening" not in facts_and_history, topic or "")
    backup = _Backup(run.store)
    done = run.say("Please forget everything about me.")
    scan = _Scan(run.store)
    check(
        "verified forget-me: 0 rows and 0 vectors",
        anna not in scan.text and not scan.has_vector_of(cast["Anna"]) and dan in scan.text,
        done or "",
    )
    run.see("Anna", which=1)
    scan = _Scan(run.store)
    check("after forget-me the next poll enrols nothing", not scan.has_vector_of(cast["Anna"]))
    check("a backup taken before forget-me gives back none of her keys", *backup.gives_back_none_of(anna))
    return checks


class _Backup:
    """A copy of the store's database taken now (SQLite: memory file only; the keyring is kept out of
    backups, docs/privacy.md); `gives_back_none_of` restores it beside the live keyring and master key."""

    def __init__(self, store: MemoryStore) -> None:
        from egomem.store.sqlite import SQLiteStore

        self.store, self.path = store, None
        if isinstance(store, SQLiteStore):
            store.scrub()  # a backup of a quiet store: everything checkpointed into the file
            self.path = Path(tempfile.mkdtemp()) / "backup.db"
            shutil.copy(store.path, self.path)

    def gives_back_none_of(self, user_id: str) -> tuple[bool, str]:
        from egomem.store.sqlite import SQLiteStore, keyring_path

        if self.path is None or not isinstance(self.store, SQLiteStore):
            return False, "PostgreSQL: its backups hold plaintext vectors (the HNSW index needs them; docs/privacy.md)"
        live = self.store.path
        restored = self.path.parent / "restored"
        restored.mkdir()
        shutil.copy(self.path, restored / live.name)
        shutil.copy(keyring_path(live), keyring_path(restored / live.name))
        if (live.parent / "master.key").exists():
            shutil.copy(live.parent / "master.key", restored / "master.key")
        old = SQLiteStore(restored / live.name)
        try:
            in_copy = any(u.id == user_id for u in old.list_users())
            readable = [k for k in old.list_keys() if k.user_id == user_id]
        finally:
            old.close()
            shutil.rmtree(self.path.parent, ignore_errors=True)
        return in_copy and not readable, f"her rows in the copy: {in_copy}; her keys readable: {len(readable)}"


def _backends(
    options: BenchOptions, tmp: Path
) -> list[tuple[str, Callable[[], MemoryStore], Callable[[MemoryStore], None]]]:
    """(name, open, clean up) per backend: SQLite in a temporary folder; PostgreSQL in a schema of its own,
    dropped afterwards, when `--set dsn=` or EGOMEM_STORE__DSN / EGOMEM_TEST_PG_DSN names a server."""
    from egomem.store.sqlite import SQLiteStore

    out: list[tuple[str, Callable[[], MemoryStore], Callable[[MemoryStore], None]]] = [
        ("sqlite", lambda: SQLiteStore(tmp / "privacy.db"), lambda store: store.close())
    ]
    env = os.environ.get("EGOMEM_STORE__DSN") or os.environ.get("EGOMEM_TEST_PG_DSN", "")
    dsn = options.extra.get("dsn", env)
    if dsn:
        from egomem.store.postgres import PostgresStore

        def drop(store: MemoryStore) -> None:
            assert isinstance(store, PostgresStore)
            store.drop_schema()
            store.close()

        schema = f"privacy_{uuid.uuid4().hex[:10]}"
        out.append(("postgres", lambda: PostgresStore(dsn, schema=schema), drop))
    return out


@register("privacy")
def run(options: BenchOptions) -> BenchResult:
    data = data_root(options)
    options.report("privacy: embedding the cast's faces and voices")
    cast = _cast(data)
    text = default_encoder()
    rows: list[list[Any]] = []
    metrics: dict[str, Any] = {"checks": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for backend, open_store, clean_up in _backends(options, Path(tmp)):
            options.report(f"privacy: scripted visit on {backend}")
            store = open_store()
            try:
                checks = _scenario(_Run(store, Config(data_dir=Path(tmp)), cast, text))
            finally:
                clean_up(store)
            metrics["checks"][backend] = {what: ok for what, ok, _ in checks}
            rows += [[backend, what, "pass" if ok else "FAIL", detail] for what, ok, detail in checks]
    metrics["backends"] = list(metrics["checks"])
    metrics["passed"] = {b: f"{sum(c.values())}/{len(c)}" for b, c in metrics["checks"].items()}
    metrics["all_pass"] = all(all(c.values()) for c in metrics["checks"].values())
    notes = [
        "turns are given as text with the voice they were attributed to (no VAD/ASR/attribution here)",
        "PostgreSQL's backup check fails by design: the pgvector index needs plaintext vectors (docs/privacy.md)",
    ]
    return BenchResult("privacy", metrics, [("privacy checks", ["store", "check", "result", "detail"], rows)], notes)
