"""Bad input through the whole session pipeline: memory is never corrupted, failures are
recorded with their reason and can be retried. Endpoint answers are recorded (protocol test)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from egomem.identity.types import Identification, IdentityStatus
from egomem.llm.openai_compat import OpenAICompatProvider
from egomem.memory.items import SessionText, Turn
from egomem.memory.manager import MemoryManager
from egomem.memory.rules_provider import RulesProvider
from egomem.retrieval.encoder import TextEncoder
from egomem.schemas import Fact
from egomem.store.sqlite import SQLiteStore

T0 = 1_700_000_000.0


@pytest.fixture(scope="module")
def encoder() -> TextEncoder:
    return TextEncoder()


def _session(ep: str, *user: str) -> SessionText:
    turns = [Turn(speaker="user", text=u) for u in user] + [Turn(speaker="assistant", text="I see.")]
    return SessionText(episode_id=ep, start=T0, end=T0 + 60, date="14 November 2023", turns=turns)


def _snapshot(store: SQLiteStore) -> tuple[int, int]:
    users = store.list_users()
    return len(users), sum(len(store.list_facts(u.id, include_history=True)) for u in users)


def _provider(url: str) -> OpenAICompatProvider:
    return OpenAICompatProvider(url, "recorded", max_retries=1, backoff_s=0.01, timeout_s=2.0)


def test_endpoint_down_records_failure_then_retry_succeeds(
    store: SQLiteStore, encoder: Any, free_port_url: str
) -> None:
    mgr = MemoryManager(store, _provider(free_port_url), encoder)
    out = mgr.process(_session("e1", "I'm Ana and I live in Porto."))
    assert not out.ok and out.reason == "endpoint unreachable"
    assert _snapshot(store) == (0, 0)
    ep = store.get_episode("e1")
    assert ep.status == "failed:endpoint unreachable" and "Porto" in ep.user_transcript
    # Later, with a working backend, the stored transcript is processed.
    out2 = MemoryManager(store, RulesProvider(), encoder).retry("e1")
    assert out2.ok and store.get_episode("e1").status == "done"
    assert [f.text for f in store.list_facts(out2.user_id or "") if f.kind == "fact"] == ["lives in Porto"]


@pytest.mark.parametrize("content", ["{not json", json.dumps({"items": [{"kind": "fact"}]})])
def test_invalid_answer_leaves_memory_untouched(
    store: SQLiteStore, encoder: Any, chat_server: Any, content: str
) -> None:
    u = store.create_user("Ana")
    store.add_fact(Fact(user_id=u.id, text="lives in Porto"))
    before = _snapshot(store)
    chat_server.script = [chat_server.Scripted(content=content)]
    known = Identification(status=IdentityStatus.KNOWN, user_id=u.id)
    out = MemoryManager(store, _provider(chat_server.base_url), encoder).process(
        _session("e2", "I moved to Rome."), known
    )
    assert not out.ok and out.reason in ("malformed JSON", "wrong JSON shape")
    assert _snapshot(store) == before and store.get_episode("e2").status.startswith("failed:")


def test_recorded_llm_session_with_invented_source_and_bad_plan(
    store: SQLiteStore, encoder: Any, chat_server: Any
) -> None:
    S = chat_server.Scripted
    extraction = {
        "items": [
            {"kind": "name", "text": "Ana", "source_text": "I'm Ana"},
            {"kind": "fact", "text": "lives in Porto", "source_text": "I live in Porto"},
            {"kind": "fact", "text": "is a billionaire", "source_text": "I am a billionaire"},  # never said
            {"kind": "summary", "text": "On 14 November 2023, Ana said she lives in Porto.", "source_text": "x"},
        ]
    }
    plan = {"decisions": [{"index": 0, "op": "ADD"}, {"index": 1, "op": "ADD"}]}
    chat_server.script = [S(content=json.dumps(extraction)), S(content=json.dumps(plan))]
    mgr = MemoryManager(store, _provider(chat_server.base_url), encoder)
    out = mgr.process(_session("e3", "Hi! I'm Ana and I live in Porto."))
    assert out.ok and store.get_user(out.user_id or "").name == "Ana"
    facts = store.list_facts(out.user_id or "")
    assert sorted(f.text for f in facts) == ["On 14 November 2023, Ana said she lives in Porto.", "lives in Porto"]
    assert all(f.source_episode == "e3" and f.source_text for f in facts)
    assert any("billionaire" in n for n in out.notes)
    # An update plan that names a fact that does not exist is refused whole.
    bad_plan = {"decisions": [{"index": 0, "op": "UPDATE", "target": "f_nope"}]}
    chat_server.script = [
        S(content=json.dumps({"items": [extraction["items"][1]]})),
        S(content=json.dumps(bad_plan)),
    ]
    before = _snapshot(store)
    known = Identification(status=IdentityStatus.KNOWN, user_id=out.user_id)
    out2 = mgr.process(_session("e4", "I live in Porto."), known)
    assert not out2.ok and out2.reason == "invalid update plan" and _snapshot(store) == before


def test_empty_and_silent_sessions(store: SQLiteStore, encoder: Any) -> None:
    mgr = MemoryManager(store, RulesProvider(), encoder)
    out = mgr.process(_session("e5", "", "   "))
    assert not out.ok and out.reason == "empty session"
    assert _snapshot(store) == (0, 0) and store.get_episode("e5").status == "failed:empty session"
