"""The consent turn through the agent's own run loop (the privacy hooks of runtime/agent.py).

Plumbing mocks, named as such, are test_session_close's (`EnergyVAD`, `ScheduledTrigger`) plus
`SequenceASR` (the turns' lines in order) and `SeenIdentifier` (perception mocked: every poll
"sees" the same face and voice, embeddings of tests/data/identity/near_pair.json, and the product's
PersonIdentifier decides who that is). The consent gate, PrivacyTurns, retrieval, the session
logic, the rules extractor and the store are the product's.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from tests.runtime.test_privacy_turns import A_LATER
from tests.runtime.test_session_close import EnergyVAD, ScheduledTrigger

from egomem.config import Config
from egomem.dialog.template import TemplateResponder
from egomem.identity.consent_gate import ConsentGate
from egomem.identity.identifier import PersonIdentifier
from egomem.identity.types import Identification
from egomem.memory.manager import MemoryManager
from egomem.memory.rules_provider import RulesProvider
from egomem.memory.trigger.metrics import sessions
from egomem.perception.audio import SAMPLE_RATE
from egomem.privacy.consent import QUESTION, THANKS, ConsentPolicy
from egomem.retrieval.encoder import default_encoder
from egomem.retrieval.process import RetrievalProcess
from egomem.runtime.agent import Components, EgoMem
from egomem.runtime.privacy_turns import PrivacyTurns
from egomem.store.sqlite import SQLiteStore
from egomem.stream.sources import Recording, replay

LINES = ["Hello there, nice to meet you.", "Yes, that's fine.", "I love gardening."]


class SequenceASR:
    """Plumbing mock: the lines of LINES, one per turn, in order."""

    def __init__(self) -> None:
        self.i = 0

    def transcribe(self, audio: np.ndarray) -> str:
        self.i += 1
        return LINES[min(self.i - 1, len(LINES) - 1)]


class SeenIdentifier:
    """Plumbing mock of perception: the same face and voice every poll, decided by the product's identifier."""

    def __init__(self, identifier: PersonIdentifier) -> None:
        self.identifier = identifier

    def identify(self, audio: np.ndarray | None, frames: Sequence[np.ndarray]) -> Identification:
        return self.identifier.decide(*A_LATER)


def test_a_new_person_is_asked_once_and_enrolled_only_after_yes(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "memory.db")
    config = Config(data_dir=tmp_path)
    encoder = default_encoder()
    identifier = PersonIdentifier(store, config)
    gate = ConsentGate(identifier, ConsentPolicy.ASK)
    retrieval = RetrievalProcess(
        store, SeenIdentifier(identifier), enroller=gate, encoder=encoder, config=config.retrieval
    )
    parts = Components(
        store=store,
        retrieval=retrieval,
        model=TemplateResponder(),
        transcriber=SequenceASR(),
        trigger=None,  # type: ignore[arg-type]
        sessions=sessions,
        manager=MemoryManager(store, RulesProvider(), encoder, config.memory),
        vad=EnergyVAD(),  # type: ignore[arg-type]
        privacy=PrivacyTurns(store, gate, identifier, clock=lambda: retrieval.clock()),
    )
    agent = EgoMem(config, parts)
    agent.parts.trigger = ScheduledTrigger([(8.0, 12.0), (20.0, 24.0), (30.0, 34.0)], lambda: agent.buffer.now_s)
    keys_when: list[int] = []
    agent.timeline.subscribe(lambda ev: keys_when.append(len(store.list_keys())) if ev.type == "heard" else None)
    rng = np.random.default_rng(0)
    duration = 45.0
    listen = np.zeros(round(duration * SAMPLE_RATE), np.float32)
    for a, b in ((8.0, 11.0), (20.0, 23.0), (30.0, 33.0)):
        i, j = round(a * SAMPLE_RATE), round(b * SAMPLE_RATE)
        listen[i:j] = (0.1 * rng.standard_normal(j - i)).astype(np.float32)
    result = agent.run(replay(Recording(listen, np.zeros_like(listen), [], duration)), lockstep=True)
    said = [e.fields["text"] for e in agent.timeline.events if e.type == "assistant"]
    assert said.count(QUESTION) == 1 and THANKS in said
    assert keys_when[:2] == [0, 0]  # nothing stored before the yes (the first turn, and the yes itself)
    [user] = store.list_users()
    assert {k.modality.value for k in store.list_keys(user_id=user.id)} == {"face", "voice"}
    assert [(e.kind, e.evidence) for e in store.consent_events(user.id)] == [("consent", "Yes, that's fine.")]
    stored = "\n".join(e.user_transcript for e in store.list_episodes())
    assert "Hello there" not in stored  # the session before consent was kept out of memory
    assert "gardening" in stored and result.outcomes
    store.close()
