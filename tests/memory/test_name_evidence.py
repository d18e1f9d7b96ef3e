"""A self-introduction is identity evidence (issue 26): a speaker matched by face and voice as one
user who gives another name is not that user; their session goes to the enrolled user of that name,
or to a new person, and nothing of it is written onto the matched user. Rule-based backend, real
encoder, real store."""

from __future__ import annotations

import numpy as np
import pytest
from tests.memory.test_split_repair import T0, _session

from egomem.identity.types import FaceObservation, Identification, IdentityStatus, VoiceObservation
from egomem.memory.manager import MemoryManager
from egomem.memory.rules_provider import RulesProvider
from egomem.memory.social import same_name
from egomem.store.sqlite import SQLiteStore


def _seen(seed: int, status: IdentityStatus, user_id: str | None = None) -> Identification:
    rng = np.random.default_rng(seed)
    face = FaceObservation(vector=rng.standard_normal(128).astype(np.float32), box=(0, 10, 10, 0))
    voice = VoiceObservation(vector=rng.standard_normal(256).astype(np.float32), speech_s=4.0)
    return Identification(status=status, user_id=user_id, face=face, voice=voice, llr=0.4 if user_id else -6.0)


def _facts(store: SQLiteStore, user_id: str) -> set[str]:
    return {f.text for f in store.list_facts(user_id) if f.kind != "summary"}


@pytest.fixture
def met(store: SQLiteStore, encoder: object) -> tuple[MemoryManager, str, str]:
    return meet(store, encoder)


def meet(store: SQLiteStore, encoder: object) -> tuple[MemoryManager, str, str]:
    """Alex and Bob, each enrolled by a first session of their own."""
    mgr = MemoryManager(store, RulesProvider(), encoder)  # type: ignore[arg-type]
    alex = mgr.process(_session("e1", T0, ["Hi, I'm Alex.", "I work as a nurse."]), _seen(1, IdentityStatus.NEW))
    bob = mgr.process(_session("e2", T0 + 60, ["Hello, I'm Bob.", "I live in York."]), _seen(2, IdentityStatus.NEW))
    assert alex.user_id and bob.user_id
    return mgr, alex.user_id, bob.user_id


def test_another_name_from_a_matched_speaker_is_a_new_person(store: SQLiteStore, met: tuple) -> None:
    mgr, alex, _ = met
    before = _facts(store, alex)
    wrong = _seen(3, IdentityStatus.KNOWN, alex)  # matched as Alex, just past the threshold
    out = mgr.process(_session("e3", T0 + 86_400, ["Hi, I'm Sam.", "I work as a pilot."]), wrong)
    assert out.ok and out.user_id not in (None, alex)
    assert store.get_user(out.user_id or "").name == "Sam"
    assert "works as a pilot" in _facts(store, out.user_id or "")
    assert _facts(store, alex) == before and store.get_user(alex).name == "Alex"
    # his face and voice are enrolled as his, so the next poll can tell him from Alex
    assert {k.modality.value for k in store.list_keys(user_id=out.user_id)} == {"face", "voice"}


def test_the_name_of_another_enrolled_user_is_evidence_for_them(store: SQLiteStore, met: tuple) -> None:
    mgr, alex, bob = met
    out = mgr.process(
        _session("e3", T0 + 86_400, ["It's me, I'm Bob.", "I love sailing."]), _seen(4, IdentityStatus.KNOWN, alex)
    )
    assert out.user_id == bob and "loves sailing" in _facts(store, bob)
    assert "loves sailing" not in _facts(store, alex)


def test_the_matched_users_own_name_or_its_short_form_keeps_the_match(store: SQLiteStore, met: tuple) -> None:
    mgr, alex, _ = met
    out = mgr.process(
        _session("e3", T0 + 86_400, ["I'm Alexander.", "I love tennis."]), _seen(5, IdentityStatus.KNOWN, alex)
    )
    assert out.user_id == alex and "loves tennis" in _facts(store, alex)
    assert len(store.list_users()) == 2


@pytest.mark.parametrize(
    ("known", "said", "same"),
    [("Alex", "alex", True), ("Samantha", "Sam", True), ("Chris", "Christopher", True), ("Alex", "Sam", False),
     ("Al", "Alice", False), ("Anna Lee", "Anna", True), ("", "Anna", False)],
)  # fmt: skip
def test_same_name(known: str, said: str, same: bool) -> None:
    assert same_name(known, said) is same
