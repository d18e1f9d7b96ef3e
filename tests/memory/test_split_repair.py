"""The issue's failure, at the memory level, and its repair: a second person's visit identified as the
first person (a near-threshold fused LLR) writes his job over hers and his facts onto her; every item
records the turns and the identity decision it came from, so a split of that episode gives him exactly
his memory and gives her back hers. Rule-based backend, real encoder, real store."""

from __future__ import annotations

import numpy as np

from egomem.identity.types import FaceObservation, Identification, IdentityStatus, VoiceObservation
from egomem.memory.items import SessionText, Turn
from egomem.memory.manager import MemoryManager
from egomem.memory.rules_provider import RulesProvider
from egomem.store.sqlite import SQLiteStore

T0 = 1_700_000_000.0


def _session(ep: str, start: float, lines: list[str]) -> SessionText:
    turns = []
    for i, line in enumerate(lines):
        t = start + 10 * i
        turns.append(Turn(speaker="user", text=line, start=t, end=t + 4))
        turns.append(Turn(speaker="assistant", text="I see.", start=t + 5, end=t + 6))
    return SessionText(episode_id=ep, start=start, end=start + 10 * len(lines), date="day", turns=turns)


def _new(seed: int) -> Identification:
    rng = np.random.default_rng(seed)
    face = FaceObservation(vector=rng.standard_normal(128).astype(np.float32), box=(0, 10, 10, 0))
    voice = VoiceObservation(vector=rng.standard_normal(256).astype(np.float32), speech_s=4.0)
    return Identification(status=IdentityStatus.NEW, face=face, voice=voice, llr=-6.0)


def _current(store: SQLiteStore, user_id: str) -> set[str]:
    return {f.text for f in store.list_facts(user_id) if f.kind != "summary"}


def test_a_visit_written_onto_the_wrong_person_is_split_back_by_its_provenance(
    store: SQLiteStore, encoder: object
) -> None:
    mgr = MemoryManager(store, RulesProvider(), encoder)  # type: ignore[arg-type]
    first = mgr.process(_session("e1", T0, ["Hi, I'm Sara.", "I work as a nurse.", "I live in York."]), _new(1))
    sara = first.user_id or ""
    assert first.ok and {"works as a nurse", "lives in York"} <= _current(store, sara)
    before = _current(store, sara)

    # Dan is identified as Sara at his first poll: a fused LLR just past the KNOWN threshold.
    wrong = Identification(status=IdentityStatus.KNOWN, user_id=sara, llr=0.4, rule="fused LLR 0.40 >= known")
    visit = _session("e2", T0 + 86_400, ["I work as a pilot.", "I live in Leeds.", "I love sailing."])
    assert mgr.process(visit, wrong).ok
    assert {"works as a pilot", "lives in Leeds", "loves sailing"} <= _current(store, sara)
    assert "works as a nurse" not in _current(store, sara)  # his job replaced hers
    for fact in (f for f in store.list_facts(sara) if f.source_episode == "e2"):
        # Each item keeps the decision that put it there, and the turn it was said in.
        assert (fact.identity_status, fact.identity_llr) == ("known", 0.4)
        assert fact.source_turns and len(fact.source_turns) >= 1
    pilot = next(f for f in store.list_facts(sara) if f.text == "works as a pilot")
    assert pilot.source_turns == [[T0 + 86_400, T0 + 86_404]]

    repair = store.split_user(sara, ["e2"], name="Dan")
    dan = repair.other_user_id
    assert _current(store, sara) == before  # hers again, as before his visit
    assert {"works as a pilot", "lives in Leeds", "loves sailing"} <= _current(store, dan)
    assert [e.id for e in store.list_episodes(dan)] == ["e2"]
    assert store.undo_repair(repair.id).undone_at is not None
    assert "works as a pilot" in _current(store, sara)
