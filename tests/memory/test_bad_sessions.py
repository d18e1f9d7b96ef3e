"""Sessions that hold nothing to remember (#27's bad input: one word, another language, an ASR
loop, no words at all) write no fact, and never touch what memory already holds. The default
memory path (the rules' write; the model's pass is covered by test_long_sessions and test_jobs)."""

from __future__ import annotations

import pytest
from tests.memory.test_end_to_end import _new

from egomem.memory.items import SessionText, Turn
from egomem.memory.manager import MemoryManager
from egomem.memory.rules_provider import RulesProvider
from egomem.schemas import FactKind
from egomem.store.sqlite import SQLiteStore

T0 = 1_700_000_000.0


def _session(ep: str, texts: list[str], day: int = 0) -> SessionText:
    start = T0 + day * 86_400.0
    return SessionText(
        episode_id=ep,
        start=start,
        end=start + 60,
        date=f"day {day}",
        turns=[Turn(speaker="user", text=t) for t in texts] + [Turn(speaker="assistant", text="I see.")],
    )


BAD = {
    "one word": ["Hi."],
    "another language": ["Bonjour, je suis très fatiguée aujourd'hui.", "Il fait froid à Lyon ce matin."],
    "an ASR loop": ["yeah " * 400],
    "no words": ["", "   "],
}


@pytest.mark.parametrize("texts", BAD.values(), ids=BAD.keys())
def test_a_session_with_nothing_to_remember_writes_no_fact_and_keeps_memory(
    store: SQLiteStore, encoder, texts: list[str]
) -> None:
    mgr = MemoryManager(store, RulesProvider(), encoder)
    first = mgr.process(_session("e1", ["Hi, I'm Maria. I live in Lyon and I work as a nurse."]), _new(1))
    assert first.ok and first.user_id
    before = {(f.id, f.text) for f in store.list_facts(first.user_id) if f.kind != FactKind.SUMMARY}
    assert {"lives in Lyon", "works as a nurse"} <= {t for _, t in before}
    out = mgr.process(_session("e2", texts, day=1), _new(1))
    # A defined result: processed (at most a summary of the episode), or refused as empty.
    assert out.ok or out.reason == "empty session", out.reason
    facts_now = {
        (f.id, f.text) for u in store.list_users() for f in store.list_facts(u.id) if f.kind != FactKind.SUMMARY
    }
    assert facts_now == before  # nothing added, nothing superseded or deleted
    assert store.get_user(first.user_id).name == "Maria"
