from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import pytest

from egomem.config import RetrievalConfig
from egomem.errors import InputError
from egomem.identity.types import Identification, IdentityStatus
from egomem.retrieval.encoder import TextEncoder
from egomem.retrieval.events import MemChunkUpdated
from egomem.retrieval.polling import PollPolicy
from egomem.retrieval.process import RetrievalProcess
from egomem.schemas import Fact, Relation
from egomem.store.sqlite import SQLiteStore


class ScriptedFakeIdentifier:
    """A fake Identifier: returns a scripted Identification per call (not a real recogniser)."""

    def __init__(self, script: Sequence[Identification]) -> None:
        self.script = list(script)
        self.calls = 0

    def identify(self, audio: np.ndarray | None, frames: Sequence[np.ndarray]) -> Identification:
        ident = self.script[min(self.calls, len(self.script) - 1)]
        self.calls += 1
        if ident.status == IdentityStatus.UNKNOWN and ident.user_id == "raise":
            raise InputError("corrupt frame")
        return ident


class FakeWindow:
    def last_audio(self, seconds: float) -> np.ndarray | None:
        return np.zeros(int(16000 * seconds), dtype=np.float32)

    def latest_frames(self, n: int) -> Sequence[np.ndarray]:
        return [np.zeros((8, 8, 3), dtype=np.uint8)]


class FakeEnroller:
    def __init__(self, store: SQLiteStore) -> None:
        self.store = store
        self.enrolled: list[str] = []

    def enroll_new(self, identification: Identification) -> str:
        uid = self.store.create_user(None, cause="fake provisional enrollment").id
        self.enrolled.append(uid)
        return uid


def known(uid: str) -> Identification:
    return Identification(IdentityStatus.KNOWN, user_id=uid)


NOBODY = Identification(IdentityStatus.UNKNOWN)
NEW = Identification(IdentityStatus.NEW)


def make(store: SQLiteStore, encoder: TextEncoder, script: Sequence[Identification], **kw: object) -> RetrievalProcess:
    return RetrievalProcess(store, ScriptedFakeIdentifier(script), FakeWindow(), encoder=encoder, **kw)  # type: ignore[arg-type]


def people(store: SQLiteStore) -> tuple[str, str]:
    emily, john = store.create_user("Emily"), store.create_user("John")
    store.add_relation(Relation(subject_id=emily.id, relation="colleague", object_id=john.id))
    store.add_fact(Fact(user_id=john.id, text="John loves tennis"))
    store.add_fact(Fact(user_id=emily.id, text="Emily works at the observatory"))
    return emily.id, john.id


def test_alternating_people_yield_the_right_level1_events(store: SQLiteStore, encoder: TextEncoder) -> None:
    e, j = people(store)
    # E E E J(glitch) E E J J J J E E ; debounce = 2 consecutive polls
    seq = [e, e, e, j, e, e, j, j, j, j, e, e]
    proc = make(store, encoder, [known(u) for u in seq])
    events: list[MemChunkUpdated] = []
    proc.subscribe(events.append)
    switched_at = []
    for i in range(len(seq)):
        before = proc.current_user()
        proc.poll_once()
        if proc.current_user() != before:
            switched_at.append(i)
    assert [ev.user_id for ev in events if ev.level == 1] == [e, j, e]
    assert switched_at == [1, 7, 11]  # one poll after each first clear observation (< 2 intervals)
    assert all(ev.tokens == encoder.count_tokens(ev.text) for ev in events)
    assert "Current user: Emily" in events[0].text and "John: colleague" in events[0].text
    assert proc.level1_chunk().user_id == e


def test_chunk_reemitted_only_on_change_and_cleared_when_absent(store: SQLiteStore, encoder: TextEncoder) -> None:
    e, _ = people(store)
    script = [known(e)] * 6 + [NOBODY] * 2 + [known(e)] + [NOBODY] * 3
    proc = make(store, encoder, script, policy=PollPolicy(absent_polls=3))
    events: list[MemChunkUpdated] = []
    proc.subscribe(events.append)
    for _ in script:
        proc.poll_once()
    assert [(ev.level, ev.user_id) for ev in events] == [(1, e), (1, None)]
    assert events[-1].text == "" and proc.level1_chunk().text == "" and proc.current_user() is None


def test_steady_unknown_person_becomes_provisional_user(store: SQLiteStore, encoder: TextEncoder) -> None:
    enroller = FakeEnroller(store)
    proc = make(store, encoder, [NEW, NOBODY, NEW, NEW, NEW], enroller=enroller)
    for _ in range(4):
        proc.poll_once()
    assert len(enroller.enrolled) == 1  # one NEW frame alone did not enroll
    assert proc.current_user() == enroller.enrolled[0]
    assert proc.level1_chunk().text == "Current user: name not known yet"


def test_identifier_errors_and_empty_store(store: SQLiteStore, encoder: TextEncoder) -> None:
    proc = make(store, encoder, [Identification(IdentityStatus.UNKNOWN, user_id="raise")])
    assert proc.poll_once().status == IdentityStatus.UNKNOWN
    assert proc.current_user() is None and proc.level1_chunk().text == ""
    assert proc.retrieve(["colleague"], ["tennis"]).text == ""
    no_user = proc.on_model_text("<retr>:\ncolleague\ntennis<answer>")
    assert len(no_user) == 1 and no_user[0].text == "" and no_user[0].user_id is None
    assert proc.search("tennis") == [] and proc.search_episodes("tennis") == []
    with pytest.raises(InputError):
        proc.retrieve(["a"], ["b"], k=-1)


def test_model_text_triggers_level2_paper_example(store: SQLiteStore, encoder: TextEncoder) -> None:
    e, _ = people(store)
    proc = make(store, encoder, [known(e)] * 2)
    proc.poll_once()
    proc.poll_once()
    events: list[MemChunkUpdated] = []
    proc.subscribe(events.append)
    chunks = []
    for tok in ["Let me ", "check <re", "tr>:\ncol", "league\nten", "nis<ans", "wer> Yes"]:
        chunks.extend(proc.on_model_text(tok))
    assert len(chunks) == 1 and "John, colleague: John loves tennis" in chunks[0].text
    assert events == [MemChunkUpdated.of(chunks[0])]
    assert proc.level2_chunk().text == chunks[0].text
    john_fact = store.list_facts(store.find_users_by_name("John")[0].id)[0]
    assert john_fact.use_count == 1  # retrieval reinforces what it used
    # both groups empty: defined empty result, nothing emitted
    assert proc.on_model_text("<retr>:\n\n<answer>")[0].text == ""
    assert len(events) == 1


def test_query_while_user_changes_is_discarded(store: SQLiteStore, encoder: TextEncoder) -> None:
    e, j = people(store)
    proc = make(store, encoder, [known(e)] * 2 + [known(j)] * 2)
    proc.poll_once()
    proc.poll_once()
    events: list[MemChunkUpdated] = []
    proc.subscribe(events.append)
    real_rank = proc.cache.embed

    def switch_mid_query(texts: Sequence[str]) -> np.ndarray:
        proc.poll_once()
        proc.poll_once()  # John takes over while Emily's query is being ranked
        return real_rank(texts)

    proc.cache.embed = switch_mid_query  # type: ignore[method-assign]
    chunk = proc.retrieve(["colleague"], ["tennis"])
    assert chunk.text == "" and chunk.user_id == j
    assert [ev.level for ev in events] == [1]  # John's profile only; no stale Level-2 for Emily
    assert proc.level2_chunk().text == ""


def test_polling_thread_runs_and_stops(store: SQLiteStore, encoder: TextEncoder) -> None:
    e, _ = people(store)
    proc = make(store, encoder, [known(e)] * 100, config=RetrievalConfig(poll_interval_s=0.01))
    got = threading.Event()
    proc.subscribe(lambda ev: got.set())
    proc.start()
    try:
        assert got.wait(5.0)
    finally:
        proc.stop()
    assert proc.current_user() == e


def test_a_second_person_heard_is_named_in_level1_and_answered_from_their_memory(
    store: SQLiteStore, encoder: TextEncoder
) -> None:
    e, j = people(store)
    store.add_relation(Relation(subject_id=j, relation="sister", object_name="Mia"))
    store.add_fact(Fact(user_id=e, text="Emily's brother Tom plays chess"))
    now = [100.0]
    proc = make(store, encoder, [known(e)] * 20, clock=lambda: now[0], config=RetrievalConfig(presence_window_s=10.0))
    proc.poll_once()
    proc.poll_once()
    events: list[MemChunkUpdated] = []
    proc.subscribe(events.append)
    proc.heard_speaker(j)  # John, at Emily's side, says something (attributed by his voice)
    assert proc.current_user() == e and proc.others_present() == (j,)
    assert proc.level1_chunk().text.splitlines()[:2] == ["Current user: Emily", "Also here: John (colleague)"]
    assert [ev.level for ev in events] == [1]
    # John's question is answered from John's people, not Emily's.
    chunk = proc.retrieve(["sister"], ["Mia"])
    assert "Mia" in chunk.text and chunk.user_id == j
    proc.answering(None)  # Emily speaks again
    emily_side = proc.retrieve(["sister"], ["Mia"])
    assert emily_side.user_id == e and "Mia" not in emily_side.text
    # Ten seconds without hearing John: the next poll drops him from Level 1.
    now[0] += 11.0
    proc.poll_once()
    assert proc.others_present() == () and "Also here" not in proc.level1_chunk().text
    assert [ev.level for ev in events] == [1, 2, 2, 1]


def test_unsure_is_not_this_user_and_never_enrols(store: SQLiteStore, encoder: TextEncoder) -> None:
    # UNSURE (identity between "the best candidate" and "someone new", identity/calibration.py) never
    # switches Level 1 to anyone nor enrols a new person; a run of UNSURE polls clears the current
    # user, so an unsure person's turns are not written to whoever was there before.
    e, _ = people(store)
    unsure = Identification(IdentityStatus.UNSURE, candidates=[(e, 0.9)])
    enroller = FakeEnroller(store)
    proc = make(store, encoder, [unsure] * 4, enroller=enroller)
    for _ in range(4):
        proc.poll_once()
    assert proc.current_user() is None and enroller.enrolled == []
    proc = make(store, encoder, [known(e), known(e), unsure, known(e), unsure, unsure, unsure], enroller=enroller)
    currents = []
    for _ in range(7):
        proc.poll_once()
        currents.append(proc.current_user())
    # One UNSURE poll between known ones is debounced; two in a row clear the user.
    assert currents == [None, e, e, e, e, None, None]
    assert enroller.enrolled == [] and proc.level1_chunk().text == ""
