"""A session of a speaker identity is UNSURE about (issue 26, Build item 3): nothing is written to
the candidate or anyone unless the speaker says the candidate's name; otherwise it is held (its
transcripts, no participant) for the runtime to settle, then handed over for the person it was or
dropped with a record. Rule-based backend, real encoder, real store."""

from __future__ import annotations

import pytest
from tests.memory.test_name_evidence import _facts, _seen, meet
from tests.memory.test_split_repair import T0, _session

from egomem.identity.types import Identification, IdentityStatus
from egomem.memory.manager import HELD, MemoryManager
from egomem.memory.rules_provider import RulesProvider
from egomem.store.sqlite import SQLiteStore


@pytest.fixture
def met(store: SQLiteStore, encoder: object) -> tuple[MemoryManager, str, str]:
    return meet(store, encoder)


def _unsure(seed: int, candidate: str) -> Identification:
    seen = _seen(seed, IdentityStatus.UNSURE)
    seen.candidates, seen.llr = [(candidate, 0.7)], 1.5
    seen.user_id = candidate  # as runtime/unsure.py hands it over: the candidate
    return seen


def _everyone(store: SQLiteStore) -> dict[str, set[str]]:
    return {u.id: _facts(store, u.id) for u in store.list_users()}


def test_an_unsure_speaker_without_a_name_is_held_and_written_nowhere(store: SQLiteStore, met: tuple) -> None:
    mgr, alex, _ = met
    before, users = _everyone(store), len(store.list_users())
    out = mgr.process(_session("e3", T0 + 86_400, ["Hello again.", "I work as a pilot."]), _unsure(3, alex))
    assert out.ok and out.held and out.user_id is None and out.held_name is None
    assert _everyone(store) == before and len(store.list_users()) == users  # no fact, no new person
    ep = store.get_episode("e3")
    assert ep.status == HELD and ep.participants == [] and "pilot" in ep.user_transcript


def test_the_candidates_own_name_settles_it_for_the_candidate(store: SQLiteStore, met: tuple) -> None:
    mgr, alex, _ = met
    out = mgr.process(_session("e3", T0 + 86_400, ["It's Alex.", "I work as a pilot."]), _unsure(3, alex))
    assert not out.held and out.user_id == alex and "works as a pilot" in _facts(store, alex)


def test_another_name_is_held_with_the_name_for_the_runtime_to_settle(store: SQLiteStore, met: tuple) -> None:
    mgr, alex, _ = met
    before = _everyone(store)
    # Even the name of another enrolled user: face and voice pointed at Alex, not at Bob.
    for ep, name in (("e3", "Sam"), ("e4", "Bob")):
        out = mgr.process(_session(ep, T0 + 86_400, [f"Hi, I'm {name}.", "I love sailing."]), _unsure(3, alex))
        assert out.held and out.held_name == name
    assert _everyone(store) == before


def test_a_held_session_is_released_to_its_person_or_dropped_with_a_record(store: SQLiteStore, met: tuple) -> None:
    mgr, alex, bob = met
    mgr.process(_session("e3", T0 + 86_400, ["Hello again.", "I love sailing."]), _unsure(3, alex))
    mgr.process(_session("e4", T0 + 86_500, ["Hello.", "I work as a pilot."]), _unsure(4, alex))
    # e3 turned out to be Bob: handed over again for him
    out = mgr.process(mgr.held_session("e3"), Identification(IdentityStatus.KNOWN, user_id=bob))
    assert out.user_id == bob and "loves sailing" in _facts(store, bob)
    assert store.get_episode("e3").participants == [bob] and store.get_episode("e3").status == "done"
    assert not mgr.drop_held("e3", "too late")  # not held any more: left as it is
    # e4 never settled: its transcript goes, the episode records why
    assert mgr.drop_held("e4", "identity never settled")
    ep = store.get_episode("e4")
    assert ep.status == "dropped" and ep.user_transcript == "" and ep.assistant_transcript == ""
    assert "pilot" not in str(_everyone(store))


def test_a_new_person_seen_among_others_gets_only_their_face_key_and_the_job_keeps_why(store: SQLiteStore) -> None:
    from dataclasses import replace

    from egomem.memory.jobs import decode, encode
    from egomem.retrieval.encoder import default_encoder

    seen = _seen(5, IdentityStatus.NEW)
    assert seen.face is not None
    seen.face = replace(seen.face, faces_in_view=3)
    session = _session("e9", T0, ["Hi, I'm Dana.", "I work as a baker."])
    _, back = decode(encode(session, seen))  # through the memory queue's payload
    assert back is not None and back.face is not None and back.face.faces_in_view == 3
    out = MemoryManager(store, RulesProvider(), default_encoder()).process(session, back)
    assert {k.modality.value for k in store.list_keys(user_id=out.user_id)} == {"face"}


def test_the_sleep_pass_drops_held_sessions_nobody_could_settle_any_more(store: SQLiteStore, met: tuple) -> None:
    from egomem.config import MemoryConfig, RetentionConfig
    from egomem.memory.sleep_time import sleep_pass
    from egomem.retrieval.encoder import default_encoder

    mgr, alex, _ = met
    mgr.process(_session("e3", T0 + 86_400, ["Hello again.", "I love sailing."]), _unsure(3, alex))
    end = store.get_episode("e3").end
    cfg = (MemoryConfig(), RetentionConfig())
    early = sleep_pass(store, default_encoder(), *cfg, now=end + 60, held_s=1800)  # a crash left it held
    assert early.held_dropped == [] and store.get_episode("e3").status == HELD
    late = sleep_pass(store, default_encoder(), *cfg, now=end + 3600, held_s=1800)
    assert late.held_dropped == ["e3"] and store.get_episode("e3").status == "dropped"
    assert store.get_episode("e3").user_transcript == ""
    assert any("drop held session e3" in line for line in late.lines())
