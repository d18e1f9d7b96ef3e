"""People identity is unsure about, held by the consent gate (issue 26, Build item 3), on the
product's own embeddings (tests/data/identity/near_pair.json): never enrolled while unsure, the same
observations keep one unsure id, the candidate is confirmed only from the same person's
observations, and someone new is enrolled with what was seen (under `ask`, asked first)."""

from __future__ import annotations

from dataclasses import replace

from tests.runtime.test_privacy_turns import A_FIRST, A_LATER, B, _turns

from egomem.identity.types import Identification, IdentityStatus
from egomem.privacy.consent import ConsentPolicy
from egomem.store.sqlite import SQLiteStore


def _unsure(obs: tuple, candidate: str) -> Identification:
    return Identification(IdentityStatus.UNSURE, face=obs[0], voice=obs[1], candidates=[(candidate, 0.6)])


def _known(obs: tuple, user: str) -> Identification:
    return Identification(IdentityStatus.KNOWN, user_id=user, face=obs[0], voice=obs[1])


def test_an_unsure_person_is_held_under_one_id_and_never_enrolled(store: SQLiteStore) -> None:
    gate = _turns(store, ConsentPolicy.IMPLICIT).gate
    alex = gate.enroll_new(Identification(IdentityStatus.NEW, face=A_FIRST[0], voice=A_FIRST[1]))
    keys = len(store.list_keys())
    person = gate.hold_unsure(_unsure(B, alex))
    assert gate.is_unsure(person) and not gate.is_pending(person) and gate.candidate_of(person) == alex
    assert gate.hold_unsure(_unsure(B, alex)) == person  # the same observations: the same person
    assert len(store.list_keys()) == keys and len(store.list_users()) == 1
    held = gate.observed_as(person)
    assert held.status == IdentityStatus.UNSURE and held.user_id == alex and held.face is not None


def test_the_candidate_is_confirmed_only_from_the_unsure_persons_own_observations(store: SQLiteStore) -> None:
    gate = _turns(store, ConsentPolicy.IMPLICIT).gate
    alex = gate.enroll_new(Identification(IdentityStatus.NEW, face=A_FIRST[0], voice=A_FIRST[1]))
    person = gate.hold_unsure(_unsure(A_LATER, alex))
    other = store.create_user("Zoe", cause="test").id
    assert not gate.confirmed(person, other, _known(A_LATER, other))  # not the candidate
    assert not gate.confirmed(person, alex, _known(B, alex))  # someone else's face and voice came in
    assert gate.is_unsure(person)
    assert gate.confirmed(person, alex, _known(A_LATER, alex))
    assert not gate.is_unsure(person) and gate.resolve(person) == alex
    # Settled for this visit: still unsure, the same observations stay Alex; someone else's do not.
    assert gate.hold_unsure(_unsure(A_LATER, alex)) == alex
    assert gate.is_unsure(gate.hold_unsure(_unsure(B, alex)))


def test_someone_new_is_enrolled_with_the_keys_seen_and_the_name_said(store: SQLiteStore) -> None:
    gate = _turns(store, ConsentPolicy.IMPLICIT).gate
    alex = gate.enroll_new(Identification(IdentityStatus.NEW, face=A_FIRST[0], voice=A_FIRST[1]))
    person = gate.hold_unsure(_unsure(B, alex))
    sam = gate.resolve_unsure(person, None, "Sam")
    assert sam != alex and store.get_user(sam).name == "Sam"
    assert {k.modality.value for k in store.list_keys(user_id=sam)} == {"face", "voice"}
    assert gate.resolve(person) == sam and not gate.is_unsure(person)


def test_polls_that_say_new_make_the_unsure_person_someone_new(store: SQLiteStore) -> None:
    gate = _turns(store, ConsentPolicy.IMPLICIT).gate
    alex = gate.enroll_new(Identification(IdentityStatus.NEW, face=A_FIRST[0], voice=A_FIRST[1]))
    person = gate.hold_unsure(_unsure(B, alex))
    uid = gate.enroll_new(Identification(IdentityStatus.NEW, face=B[0], voice=B[1]))
    assert uid not in (alex, person) and gate.resolve(person) == uid


def test_under_ask_someone_new_is_asked_first_and_a_forgotten_person_is_never_settled(store: SQLiteStore) -> None:
    turns = _turns(store, ConsentPolicy.ASK)
    gate = turns.gate
    alex = store.create_user("Alex", cause="test").id
    person = gate.hold_unsure(_unsure(B, alex))
    pending = gate.resolve_unsure(person, None, "Sam")
    assert gate.is_pending(pending) and gate.unsure_gone(person) and store.list_keys() == []
    turns = _turns(store, ConsentPolicy.ASK)  # a fresh visit
    gate = turns.gate
    other = gate.hold_unsure(_unsure(A_LATER, alex))
    assert gate.is_unsure(other)
    handled = turns.on_turn("Please forget me.", other, None)
    assert handled is not None and "haven't kept anything" in handled.say
    assert gate.unsure_gone(other) and gate.resolve_unsure(other, alex) == other  # never written to Alex


def test_the_candidate_needs_the_visits_evidence_not_just_its_last_polls(store: SQLiteStore) -> None:
    # The same face and voice, unsure for most of the visit (fused LLR 2 for Alex, KNOWN needs about
    # 4.6), then two polls just past KNOWN: still unsure (mean below KNOWN); clear evidence settles it.
    gate = _turns(store, ConsentPolicy.IMPLICIT).gate
    alex = gate.enroll_new(Identification(IdentityStatus.NEW, face=A_FIRST[0], voice=A_FIRST[1]))
    known_llr = gate.identifier.thresholds[0]
    unsure = _unsure(A_LATER, alex)
    unsure.llr = known_llr - 2.5
    person = ""
    for _ in range(3):
        person = gate.hold_unsure(unsure)
    barely = _known(A_LATER, alex)
    barely.llr = known_llr + 0.5
    assert gate.confirmed(person, alex, barely) is None and gate.is_unsure(person)
    clear = _known(A_LATER, alex)
    clear.llr = known_llr + 10.0
    assert gate.confirmed(person, alex, clear) is True and gate.resolve(person) == alex


def test_with_several_faces_in_view_a_new_person_is_enrolled_without_a_voice_until_seen_alone(
    store: SQLiteStore,
) -> None:
    # Issue 26 item 5: a face and a voice are one person's only when linked; two faces in view and one
    # voice link nothing, so the voice waits, and the identifier's cross-modal enrolment adds it when
    # the person is recognised alone by face and the voice is nobody else's.
    turns = _turns(store, ConsentPolicy.IMPLICIT)
    face = replace(A_FIRST[0], faces_in_view=2)
    uid = turns.gate.enroll_new(Identification(IdentityStatus.NEW, face=face, voice=A_FIRST[1]))
    assert {k.modality.value for k in store.list_keys(user_id=uid)} == {"face"}
    alone = turns.identifier.decide(*A_LATER)
    assert alone.status == IdentityStatus.KNOWN and alone.user_id == uid
    turns.identifier.learn(alone)
    assert {k.modality.value for k in store.list_keys(user_id=uid)} == {"face", "voice"}
