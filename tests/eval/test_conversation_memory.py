"""A written conversation of two people memorised through the product: turns kept in one
episode per session, each speaker's own words through the extractor and update agent
(rules), a second session confirming what the first said; bad calls change nothing."""

from __future__ import annotations

import pytest

from egomem.errors import InputError, NotFoundError
from egomem.identity.types import Identification, IdentityStatus
from egomem.memory.items import SessionText, Turn
from egomem.memory.manager import MemoryManager
from egomem.memory.rules_provider import RulesProvider
from egomem.retrieval.encoder import TextEncoder
from egomem.retrieval.search import EpisodeTurn, episode_turns
from egomem.store.sqlite import SQLiteStore
from egomem_eval.conversation_memory import memorize_conversation

T0 = 1_700_000_000.0


@pytest.fixture(scope="module")
def encoder() -> TextEncoder:
    return TextEncoder()


def test_each_speaker_remembers_their_own_words(store: SQLiteStore, encoder: TextEncoder) -> None:
    mgr = MemoryManager(store, RulesProvider(), encoder)
    first = [
        EpisodeTurn("Caroline", "I live in Boston and I love painting."),
        EpisodeTurn("Melanie", "Nice! I work as a nurse."),
    ]
    second = [EpisodeTurn("Caroline", "I still love painting."), EpisodeTurn("Melanie", "Good for you.")]
    done = memorize_conversation(mgr, [(T0, first), (T0 + 86_400, second)], cause="test")
    assert not done.failed and len(done.outcomes) == 4
    [caroline] = store.find_users_by_name("Caroline")
    [melanie] = store.find_users_by_name("Melanie")
    facts = {f.text: f for f in store.list_facts(caroline.id) if f.kind != "summary"}
    assert {"lives in Boston", "loves painting"} <= set(facts)
    assert facts["loves painting"].support == 2  # said again in the second session
    assert "works as a nurse" in {f.text for f in store.list_facts(melanie.id)}
    assert "works as a nurse" not in facts  # Melanie's words are not Caroline's memory
    # The episodes keep every speaker's turns, as stored.
    ep = store.get_episode(done.sessions[0].episode.id)
    assert [(t.speaker, t.text) for t in episode_turns(ep, "?")] == [(t.speaker, t.text) for t in first]


def test_keep_episode_refuses_an_unknown_episode_or_speaker(store: SQLiteStore, encoder: TextEncoder) -> None:
    mgr = MemoryManager(store, RulesProvider(), encoder)
    u = store.create_user("Ana")
    session = SessionText(
        episode_id="e_missing", start=T0, end=T0 + 60, date="x", turns=[Turn(speaker="user", text="I like tea.")]
    )
    known = Identification(status=IdentityStatus.KNOWN, user_id=u.id)
    with pytest.raises(NotFoundError, match="e_missing"):
        mgr.process(session, known, keep_episode=True)
    memorize_conversation(mgr, [(T0, [EpisodeTurn("Ana", "hello")])], cause="t", extract_sessions=0)
    [ep] = store.list_episodes()
    with pytest.raises(InputError, match="known user"):
        mgr.process(session.model_copy(update={"episode_id": ep.id}), None, keep_episode=True)
    assert store.list_facts(u.id) == [] and store.get_episode(ep.id).user_transcript == "Ana\thello"
