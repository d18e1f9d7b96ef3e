"""Evidence weights through the update agent (rules backend, real encoder, real store): a fact
said again in a later session is confirmed (+1, episode linked), a changed one is superseded
with -1 on the old row, a relation said again is confirmed; and the weights rank: Level-1
profile, fact search (and so `ask`), memory strength."""

from __future__ import annotations

from egomem.identity.types import Identification, IdentityStatus
from egomem.memory.items import SessionText, Turn
from egomem.memory.manager import MemoryManager
from egomem.memory.rules_provider import RulesProvider
from egomem.memory.strength import stability_days
from egomem.retrieval.dense import EmbeddingCache
from egomem.retrieval.profile import ProfileRenderer, default_fact_score
from egomem.retrieval.search import search_facts, support_weight
from egomem.retrieval.search_config import FactSearch
from egomem.schemas import Episode, Fact, FactKind
from egomem.store.sqlite import SQLiteStore

T0 = 1_700_000_000.0
DAY = 86_400.0


def _session(ep: str, day: int, *lines: str) -> SessionText:
    start = T0 + day * DAY
    turns = [Turn(speaker="user", text=line) for line in lines]
    return SessionText(episode_id=ep, start=start, end=start + 60, date=f"day {day}", turns=turns)


def test_sessions_confirm_and_contradict_through_the_update_agent(store: SQLiteStore, encoder) -> None:
    mgr = MemoryManager(store, RulesProvider(), encoder)
    first = mgr.process(_session("e1", 0, "Hi, I'm Maria. I live in Lyon. I love hiking. My colleague Tom is great."))
    maria = first.user_id or ""
    known = Identification(status=IdentityStatus.KNOWN, user_id=maria)
    mgr.process(_session("e2", 1, "I love hiking, really. My colleague Tom helped me."), known)
    mgr.process(_session("e3", 2, "I moved to Paris. I love hiking!"), known)
    # Re-processing the same episode is not new evidence.
    mgr.process(_session("e3", 2, "I moved to Paris. I love hiking!"), known)

    facts = {f.text: f for f in store.list_facts(maria, include_history=True) if f.kind != FactKind.SUMMARY}
    hiking = facts["loves hiking"]
    assert hiking.support == 3 and hiking.valid_to is None
    assert [e.episode_id for e in store.fact_evidence(hiking.id)] == ["e1", "e2", "e3"]
    lyon, paris = facts["lives in Lyon"], facts["lives in Paris"]
    assert (lyon.valid_to, lyon.superseded_by, lyon.support) == (T0 + 2 * DAY, paris.id, 0)
    assert [(e.episode_id, e.sign) for e in store.fact_evidence(lyon.id)] == [("e1", 1), ("e3", -1)]
    assert paris.support == 1
    [edge] = store.list_relations(maria)
    assert edge.relation == "colleague" and edge.support == 2
    assert [e.episode_id for e in store.relation_evidence(edge.id)] == ["e1", "e2"]


def _two_facts(store: SQLiteStore) -> tuple[str, Fact, Fact]:
    """Two equally plausible facts; the second said again in three later episodes."""
    u = store.create_user("Ana")
    for i in range(4):
        store.add_episode(Episode(id=f"e{i}", start=T0 + i, end=T0 + i + 1))
    weak = store.add_fact(Fact(user_id=u.id, text="plays the violin", source_episode="e0", valid_from=T0))
    strong = store.add_fact(Fact(user_id=u.id, text="plays the cello", source_episode="e0", valid_from=T0))
    for i in (1, 2, 3):
        strong = store.confirm_fact(strong.id, episode_id=f"e{i}", at=T0 + i)
    return u.id, store.get_fact(weak.id), strong


def test_support_ranks_the_profile_the_search_and_strength(store: SQLiteStore, encoder) -> None:
    uid, weak, strong = _two_facts(store)
    assert strong.support == 4 and weak.support == 1
    at = T0 + DAY
    assert default_fact_score(strong, at) > default_fact_score(weak, at)
    assert stability_days(strong) == 4 * stability_days(weak)
    # Level 1 with room for one fact: the better supported one.
    header = encoder.count_tokens("Current user: Ana")
    room = header + encoder.count_tokens("Facts:") + encoder.count_tokens("- plays the cello") + 1
    chunk = ProfileRenderer(store, encoder, budget=room).render(uid, at=at)
    assert "cello" in chunk.text and "violin" not in chunk.text
    # Fact search (what `ask` searches facts with): "plays an instrument" matches both about equally.
    cache, query = EmbeddingCache(encoder), "does she play the violin or the cello"
    unweighted = [weak, strong.model_copy(update={"support": 1})]
    assert search_facts(unweighted, query, cache, FactSearch(), 2)[0].fact.id == weak.id  # the text alone: violin
    assert search_facts([weak, strong], query, cache, FactSearch(), 2)[0].fact.id == strong.id  # support decides
    assert support_weight(1) == 1.0 and support_weight(0) == 1.0 and support_weight(4) == 1.2


def test_support_orders_relations_in_the_profile(store: SQLiteStore, encoder) -> None:
    from egomem.schemas import Relation

    u = store.create_user("Ana")
    store.add_episode(Episode(id="e1", start=T0, end=T0 + 1))
    store.add_relation(Relation(subject_id=u.id, relation="friend", object_name="Zed"))
    liked = store.add_relation(Relation(subject_id=u.id, relation="colleague", object_name="Bo"))
    store.confirm_relation(liked.id, episode_id="e1", at=T0)
    text = ProfileRenderer(store, encoder).render(u.id).text
    assert text.index("Bo: colleague") < text.index("Zed: friend")
