"""A person identity is unsure about, through the agent's own run loop (issue 26, Build item 3).

Perception is a plumbing mock (`SeenAs`, named as such): every poll "sees" the same face and voice,
embeddings of tests/data/identity/near_pair.json, and the product's PersonIdentifier decides who that
is: Hugo Chavez's face with another LibriSpeech voice, against Ariel Sharon enrolled as Alex, is
UNSURE (fused LLR about 0, between NEW and KNOWN). Turn audio, the trigger and ASR are the plumbing
mocks of test_consent_agent. The gate, retrieval, the name learner, the held memory, the rules
extractor and the store are the product's.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from tests.runtime.test_privacy_turns import A_FIRST, A_LATER, B
from tests.runtime.test_session_close import EnergyVAD, ScheduledTrigger

from egomem.config import Config
from egomem.dialog.template import TemplateResponder
from egomem.identity.consent_gate import ConsentGate
from egomem.identity.identifier import PersonIdentifier
from egomem.identity.types import Identification, IdentityStatus
from egomem.memory.items import SessionText, Turn
from egomem.memory.manager import MemoryManager
from egomem.memory.rules_provider import RulesProvider
from egomem.memory.trigger.metrics import sessions
from egomem.perception.audio import SAMPLE_RATE
from egomem.privacy.consent import ConsentPolicy
from egomem.retrieval.encoder import default_encoder
from egomem.retrieval.process import RetrievalProcess
from egomem.runtime.agent import Components, EgoMem, RunResult
from egomem.runtime.privacy_turns import PrivacyTurns
from egomem.runtime.window import AgentStream
from egomem.store.sqlite import SQLiteStore
from egomem.stream.sources import Recording, replay

TURNS = ((8.0, 11.0), (20.0, 23.0), (30.0, 33.0))


class LinesASR:
    """Plumbing mock: the given lines, one per turn, in order."""

    def __init__(self, lines: list[str]) -> None:
        self.lines, self.i = lines, 0

    def transcribe(self, audio: np.ndarray) -> str:
        self.i += 1
        return self.lines[min(self.i - 1, len(self.lines) - 1)]


class SeenAs:
    """Plumbing mock of perception: the same face and voice every poll, decided by the product's identifier."""

    def __init__(self, identifier: PersonIdentifier, seen: tuple = B) -> None:
        self.identifier, self.seen = identifier, seen

    def identify(self, audio: np.ndarray | None, frames: Sequence[np.ndarray]) -> Identification:
        return self.identifier.decide(*self.seen)


def _run(tmp_path: Path, lines: list[str], seen: tuple = B) -> tuple[SQLiteStore, str, EgoMem, RunResult]:
    store = SQLiteStore(tmp_path / "memory.db")
    config = Config(data_dir=tmp_path)
    encoder = default_encoder()
    identifier = PersonIdentifier(store, config)
    manager = MemoryManager(store, RulesProvider(), encoder, config.memory)
    alex = identifier.enroll(None, *A_FIRST, name="Alex")
    said = [Turn(speaker="user", text="I work as a nurse.", start=1.0, end=2.0)]
    manager.process(SessionText.dated(1e9, 1e9 + 5, said), Identification(IdentityStatus.KNOWN, user_id=alex))
    stream = AgentStream(config.runtime.buffer_s)
    gate = ConsentGate(identifier, ConsentPolicy.IMPLICIT)
    retrieval = RetrievalProcess(
        store, SeenAs(identifier, seen), enroller=gate, encoder=encoder, config=config.retrieval, clock=stream.clock
    )  # as runtime/build.py builds it: the stream's clock
    parts = Components(
        store=store,
        retrieval=retrieval,
        model=TemplateResponder(),
        transcriber=LinesASR(lines),
        trigger=ScheduledTrigger([(a, b + 1.0) for a, b in TURNS], lambda: stream.now_s),  # type: ignore[arg-type]
        sessions=sessions,
        manager=manager,
        vad=EnergyVAD(),  # type: ignore[arg-type]
        privacy=PrivacyTurns(store, gate, identifier, clock=lambda: retrieval.clock()),
    )
    agent = EgoMem(config, parts, stream=stream)
    rng = np.random.default_rng(0)
    duration = 45.0
    listen = np.zeros(round(duration * SAMPLE_RATE), np.float32)
    for a, b in TURNS:
        i, j = round(a * SAMPLE_RATE), round(b * SAMPLE_RATE)
        listen[i:j] = (0.1 * rng.standard_normal(j - i)).astype(np.float32)
    result = agent.run(replay(Recording(listen, np.zeros_like(listen), [], duration)), lockstep=True)
    return store, alex, agent, result


def _facts(store: SQLiteStore) -> dict[str | None, set[str]]:
    return {u.name: {f.text for f in store.list_facts(u.id) if f.kind != "summary"} for u in store.list_users()}


def test_an_unsure_person_sees_nobodys_memory_and_without_a_name_leaves_none(tmp_path: Path) -> None:
    store, _, agent, _ = _run(tmp_path, ["Hello there.", "I love sailing.", "See you soon."])
    chunks = [str(e.fields["text"]) for e in agent.timeline.events if e.type == "memchunk"]
    assert chunks and not any("nurse" in c or "Alex" in c for c in chunks)  # Level 1 kept Alex's memory back
    said = [str(e.fields["text"]) for e in agent.timeline.events if e.type == "assistant"]
    assert any("not sure we've met. What's your name?" in s for s in said)  # asked
    assert _facts(store) == {"Alex": {"works as a nurse"}}  # nothing on Alex, nobody new
    ops = [e.fields.get("op") for e in agent.timeline.events if e.type == "memory"]
    assert "HELD" in ops and "DROPPED" in ops
    eps = [e for e in store.list_episodes() if e.status == "dropped"]
    assert eps and all(e.user_transcript == "" for e in eps)  # dropped, with the record kept
    assert "sailing" not in "\n".join(e.user_transcript for e in store.list_episodes())
    store.close()


def test_an_unsure_person_who_gives_another_name_is_someone_new_with_all_their_turns(tmp_path: Path) -> None:
    store, *_ = _run(tmp_path, ["Hello, I love sailing.", "I'm Sam.", "I work as a pilot."])
    facts = _facts(store)
    assert facts["Alex"] == {"works as a nurse"}
    assert {"loves sailing", "works as a pilot"} <= facts["Sam"]  # the held first session followed the name
    [sam] = [u for u in store.list_users() if u.name == "Sam"]
    assert {k.modality.value for k in store.list_keys(user_id=sam.id)} == {"face", "voice"}
    assert not [e for e in store.list_episodes() if e.status.startswith(("held", "dropped"))]
    store.close()


def test_an_unsure_person_who_says_the_candidates_name_is_the_candidate(tmp_path: Path) -> None:
    store, *_ = _run(tmp_path, ["Hello, I love sailing.", "It's Alex.", "I work as a pilot."])
    facts = _facts(store)
    # The held first session followed the name; the new job supersedes the old one, on Alex.
    assert set(facts) == {"Alex"} and facts["Alex"] == {"loves sailing", "works as a pilot"}
    store.close()


def test_a_person_taken_for_someone_who_says_so_is_held_and_a_name_makes_them_someone_new(tmp_path: Path) -> None:
    # Alex's own face and voice (KNOWN, fused LLR about 30): the person is greeted as Alex and says
    # otherwise. From then on nothing is Alex's: the turns of the denial's session, and what follows.
    store, _, agent, _ = _run(tmp_path, ["Hello.", "I'm not Alex, I'm Sam.", "I love sailing."], seen=A_LATER)
    facts = _facts(store)
    assert facts["Alex"] == {"works as a nurse"} and "loves sailing" in facts["Sam"]
    ids = [e.fields.get("text", "") for e in agent.timeline.events if e.type == "identity"]
    assert any("said they are not" in str(x) for x in ids)
    store.close()


def test_that_is_not_me_without_a_name_holds_their_memory_back_from_the_matched_user(tmp_path: Path) -> None:
    store, _, agent, _ = _run(tmp_path, ["Hello.", "That's not me.", "I love sailing."], seen=A_LATER)
    assert _facts(store) == {"Alex": {"works as a nurse"}}  # Alex's polls did not take them back
    chunks = [str(e.fields["text"]) for e in agent.timeline.events if e.type == "memchunk"]
    assert "not sure who this is" in chunks[-1]
    assert "sailing" not in "\n".join(e.user_transcript for e in store.list_episodes())  # dropped at the end
    store.close()
