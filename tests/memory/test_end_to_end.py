"""Text-level end to end: two people, a third session that supersedes a changed fact,
a placeholder person merged when met. Rule-based backend, real encoder, real store."""

from __future__ import annotations

import numpy as np

from egomem.identity.types import FaceObservation, Identification, IdentityStatus, VoiceObservation
from egomem.memory.items import SessionText, Turn
from egomem.memory.manager import MemoryManager
from egomem.memory.rules_provider import RulesProvider
from egomem.schemas import FactKind, Modality, Op
from egomem.store.sqlite import SQLiteStore

DAY = 86_400.0
T0 = 1_700_000_000.0


def _session(ep: str, day: int, user: list[str], assistant: list[str]) -> SessionText:
    turns = []
    for i, u in enumerate(user):
        turns.append(Turn(speaker="user", text=u))
        if i < len(assistant):
            turns.append(Turn(speaker="assistant", text=assistant[i]))
    start = T0 + day * DAY
    return SessionText(episode_id=ep, start=start, end=start + 300, date=f"day {day}", turns=turns)


def _new(seed: int) -> Identification:
    rng = np.random.default_rng(seed)
    face = FaceObservation(vector=rng.standard_normal(128).astype(np.float32), box=(0, 10, 10, 0))
    voice = VoiceObservation(vector=rng.standard_normal(256).astype(np.float32), speech_s=4.0)
    return Identification(status=IdentityStatus.NEW, face=face, voice=voice)


def test_two_users_update_and_placeholder_merge(store: SQLiteStore, encoder) -> None:
    mgr = MemoryManager(store, RulesProvider(), encoder)
    s1 = _session(
        "e1",
        0,
        ["Hi, I'm Maria. I live in Lyon and I work as a nurse.", "My colleague Tom is great. I love hiking."],
        ["Nice to meet you, Maria!", "Hiking is fun."],
    )
    out1 = mgr.process(s1, _new(1))
    assert out1.ok, out1.reason
    maria = store.get_user(out1.user_id or "")
    assert maria.name == "Maria" and not maria.placeholder
    assert {k.modality for k in store.list_keys(user_id=maria.id)} == {Modality.FACE, Modality.VOICE}
    texts = {f.text for f in store.list_facts(maria.id)}
    assert {"lives in Lyon", "works as a nurse", "loves hiking"} <= texts
    for f in store.list_facts(maria.id):
        assert f.source_episode == "e1" and f.source_text  # provenance on every fact
    tom = [u for u in store.find_users_by_name("Tom") if u.placeholder]
    assert len(tom) == 1
    rel = store.list_relations(maria.id)
    assert [(r.subject_id, r.relation, r.object_id) for r in rel] == [(maria.id, "colleague", tom[0].id)]

    # Second person: Tom himself, met for the first time; his placeholder is merged into him.
    s2 = _session("e2", 1, ["Hello, my name is Tom. I'm allergic to peanuts."], ["Hi Tom."])
    out2 = mgr.process(s2, _new(2))
    assert out2.ok and out2.user_id not in (None, maria.id)
    assert [u.id for u in store.find_users_by_name("Tom")] == [out2.user_id]
    assert not store.get_user(out2.user_id or "").placeholder
    assert store.list_relations(maria.id)[0].object_id == out2.user_id
    assert [f.text for f in store.list_facts(out2.user_id or "", kinds=[FactKind.FACT])] == ["is allergic to peanuts"]

    # Third session, Maria again (recognised): she moved; the residence is superseded, not duplicated.
    known = Identification(status=IdentityStatus.KNOWN, user_id=maria.id)
    s3 = _session("e3", 30, ["I moved to Paris last month. I still love hiking!"], ["Welcome back."])
    out3 = mgr.process(s3, known)
    assert out3.ok and out3.user_id == maria.id
    current = [f for f in store.list_facts(maria.id) if f.kind != FactKind.SUMMARY]
    assert [f.text for f in current if "lives" in f.text] == ["lives in Paris"]
    assert sum(f.text == "loves hiking" for f in current) == 1
    old = next(f for f in store.list_facts(maria.id, include_history=True) if f.text == "lives in Lyon")
    new = next(f for f in current if f.text == "lives in Paris")
    assert old.valid_to == s3.start and old.superseded_by == new.id and new.source_episode == "e3"
    assert len(store.list_users(include_placeholders=True)) == 2
    ops = [h.op for h in store.history(maria.id)]
    assert Op.UPDATE in ops and Op.NOOP in ops
    assert len(store.list_facts(maria.id, kinds=[FactKind.SUMMARY])) == 2
