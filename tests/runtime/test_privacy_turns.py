"""The consent gate and PrivacyTurns on the product's own embeddings (tests/data/identity/near_pair.json)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from egomem.config import Config
from egomem.identity.consent_gate import ConsentGate
from egomem.identity.identifier import PersonIdentifier
from egomem.identity.types import FaceObservation, Identification, IdentityStatus, VoiceObservation
from egomem.privacy.consent import NOTICE, QUESTION, WRONG_PERSON, ConsentPolicy
from egomem.privacy.erase import CONFIRM_LINE, REFUSE_LINE
from egomem.runtime.privacy_turns import UNKNOWN, PrivacyTurns
from egomem.schemas import Fact
from egomem.store.sqlite import SQLiteStore

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "identity" / "near_pair.json"
PAIR: dict[str, Any] = json.loads(FIXTURE.read_text())


def _face(v: list[float]) -> FaceObservation:
    return FaceObservation(np.asarray(v, np.float32), (0, 1, 1, 0))


def _voice(v: dict[str, Any]) -> VoiceObservation:
    return VoiceObservation(np.asarray(v["vector"], np.float32), float(v["speech_s"]))


A_FIRST = (_face(PAIR["face"]["a_key"]), _voice(PAIR["voice"]["a_enroll"][0]))
A_LATER = (_face(PAIR["face"]["a_query"]), _voice(PAIR["voice"]["a_query"]))
B = (_face(PAIR["face"]["b"]), _voice(PAIR["voice"]["b_query"]))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "m.db")
    yield s
    s.close()


def _turns(store: SQLiteStore, policy: ConsentPolicy) -> PrivacyTurns:
    identifier = PersonIdentifier(store, Config(data_dir=Path(store.path).parent))
    return PrivacyTurns(store, ConsentGate(identifier, policy), identifier, clock=lambda: 100.0)


def _new(obs: tuple[FaceObservation, VoiceObservation]) -> Identification:
    return Identification(IdentityStatus.NEW, face=obs[0], voice=obs[1])


def test_ask_keeps_prints_in_memory_until_the_person_agrees(store: SQLiteStore) -> None:
    turns = _turns(store, ConsentPolicy.ASK)
    pending = turns.gate.enroll_new(_new(A_FIRST))
    assert turns.gate.is_pending(pending)
    assert store.list_keys() == [] and store.list_users() == []  # nothing written
    assert turns.on_person(pending) == QUESTION
    assert turns.gate.enroll_new(_new(A_LATER)) == pending  # the same person, recognised in memory
    assert turns.on_person(pending) is None  # asked once
    assert turns.keeps_out(pending)
    wrong = turns.on_turn("Yes, sure.", pending, "u_someone_else")
    assert wrong is not None and wrong.say == WRONG_PERSON and store.list_keys() == []
    done = turns.on_turn("Yes, that's fine.", pending, None)
    uid = turns.gate.resolve(pending)
    assert done is not None and uid is not None and not uid.startswith("pending_")
    assert {k.modality.value for k in store.list_keys(user_id=uid)} == {"face", "voice"}
    [event] = store.consent_events(uid)
    assert (event.kind, event.evidence, event.policy) == ("consent", "Yes, that's fine.", "ask")
    assert not turns.keeps_out(uid)


def test_a_refusal_keeps_nothing_that_could_recognise_them(store: SQLiteStore) -> None:
    turns = _turns(store, ConsentPolicy.ASK)
    pending = turns.gate.enroll_new(_new(B))
    turns.on_person(pending)
    turns.on_turn("No thanks, I'd rather you didn't.", pending, None)
    assert store.list_keys() == [] and store.list_users() == []
    [event] = store.consent_events(None)
    assert (event.kind, event.user_id, event.evidence) == ("refusal", None, "No thanks, I'd rather you didn't.")
    assert turns.gate.enroll_new(_new(B)) == pending and turns.on_person(pending) is None  # not asked again
    assert turns.gate.end_of_day() == 1


def _enrolled(turns: PrivacyTurns) -> str:
    uid = turns.identifier.enroll(None, A_FIRST[0], None, condition="test")
    for v in PAIR["voice"]["a_enroll"]:
        turns.identifier.enroll(uid, voice=_voice(v))
    turns.store.add_fact(Fact(user_id=uid, text="loves gardening"))
    turns.store.add_fact(Fact(user_id=uid, text="plays tennis"))
    return uid


def test_verified_forget_me_purges_and_the_next_poll_enrols_nothing(store: SQLiteStore) -> None:
    turns = _turns(store, ConsentPolicy.IMPLICIT)
    uid = _enrolled(turns)
    ident = turns.identifier.decide(*A_LATER)
    assert ident.status == IdentityStatus.KNOWN and ident.user_id == uid
    turns.observed(ident)
    assert turns.on_turn("She said forget me, haha.", uid, None) is None
    assert turns.on_turn("Don't forget me!", uid, None) is None
    topic = turns.on_turn("Please forget what I said about gardening.", uid, None)
    assert topic is not None and [f.text for f in store.list_facts(uid, include_history=True)] == ["plays tennis"]
    done = turns.on_turn("Please forget everything about me.", uid, None)
    assert done is not None and "I deleted 4 face and voice prints, 1 facts" in done.say
    assert store.list_users() == [] and store.list_keys() == []
    again = turns.gate.enroll_new(_new(A_LATER))
    assert turns.gate.is_pending(again) and store.list_keys() == []  # held back, not enrolled again
    assert turns.keeps_out(uid)


def test_forget_me_from_an_unsure_or_other_voice_erases_nobody(store: SQLiteStore) -> None:
    turns = _turns(store, ConsentPolicy.IMPLICIT)
    uid = _enrolled(turns)
    turns.observed(Identification(IdentityStatus.UNKNOWN))  # nobody in view
    unsure = turns.on_turn("Forget me.", uid, None)
    assert unsure is not None and unsure.say == CONFIRM_LINE
    turns.observed(turns.identifier.decide(*A_LATER))
    stranger = turns.on_turn("Forget me.", uid, UNKNOWN)
    assert stranger is not None and stranger.say == REFUSE_LINE
    assert [u.id for u in store.list_users()] == [uid] and len(store.list_keys()) == 4


def test_withdrawal_deletes_the_prints_and_keeps_the_facts(store: SQLiteStore) -> None:
    turns = _turns(store, ConsentPolicy.IMPLICIT)
    uid = _enrolled(turns)
    turns.observed(turns.identifier.decide(*A_LATER))
    done = turns.on_turn("Please stop recognising me.", uid, None)
    assert done is not None and store.list_keys() == [] and len(store.list_facts(uid)) == 2
    assert [e.kind for e in store.consent_events(uid)] == ["withdrawal"]


def test_notice_enrols_at_once_and_says_so_once(store: SQLiteStore) -> None:
    turns = _turns(store, ConsentPolicy.NOTICE)
    uid = turns.gate.enroll_new(_new(A_FIRST))
    assert not turns.gate.is_pending(uid) and len(store.list_keys(user_id=uid)) == 2
    assert turns.on_person(uid) == NOTICE and turns.on_person(uid) is None
    assert [e.kind for e in store.consent_events(uid)] == ["notice"]


def test_implicit_enrols_at_once_and_says_nothing(store: SQLiteStore) -> None:
    turns = _turns(store, ConsentPolicy.IMPLICIT)
    uid = turns.gate.enroll_new(_new(A_FIRST))
    assert len(store.list_keys(user_id=uid)) == 2 and turns.on_person(uid) is None
    assert store.consent_events(uid) == []
