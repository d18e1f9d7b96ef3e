"""The recipe-driven search over facts and episode turns (retrieval/search.py)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from egomem.retrieval.dense import EmbeddingCache
from egomem.retrieval.encoder import TextEncoder
from egomem.retrieval.search import EpisodeTurn, TurnCorpus, encode_turns, episode_turns, search
from egomem.retrieval.search_config import (
    DEFAULT,
    RECIPES,
    TURNS_BM25,
    TURNS_CONTEXT_SPEAKER,
    SearchConfig,
    SearchFilters,
    TurnSearch,
)
from egomem.schemas import Episode, Fact
from egomem.store.sqlite import SQLiteStore

DAY = 86_400.0


def test_turn_encoding_round_trip_and_plain_transcripts() -> None:
    turns = [EpisodeTurn("Ana", "I adopted\ta cat"), EpisodeTurn("Bo", "  "), EpisodeTurn("Bo", "Nice!")]
    ep = Episode(start=0, end=1, user_transcript=encode_turns(turns), assistant_transcript="Hello there")
    assert episode_turns(ep, "someone") == [
        EpisodeTurn("Ana", "I adopted a cat"),  # a tab inside text cannot break the encoding
        EpisodeTurn("Bo", "Nice!"),
        EpisodeTurn("assistant", "Hello there"),
    ]
    plain = Episode(start=0, end=1, user_transcript="hi\nI love tennis")  # as the memory manager writes it
    assert [t.speaker for t in episode_turns(plain, "Emily")] == ["Emily", "Emily"]


def test_recipes_are_validated_data() -> None:
    assert RECIPES["default"] is DEFAULT and TURNS_CONTEXT_SPEAKER.turns is not None
    with pytest.raises(ValidationError):
        TurnSearch(window=-1)
    with pytest.raises(ValidationError):
        SearchConfig(limit=0)
    with pytest.raises(ValidationError):
        TurnSearch(unknown=True)  # type: ignore[call-arg]


def _two_friends(store: SQLiteStore) -> tuple[str, str]:
    ana, bo = store.create_user("Ana").id, store.create_user("Bo").id
    day1 = [EpisodeTurn("Ana", "I finally adopted a kitten last week"), EpisodeTurn("Bo", "What is its name?")]
    day1 += [EpisodeTurn("Ana", "Her name is Pepper"), EpisodeTurn("Bo", "I went sailing with my brother")]
    day2 = [EpisodeTurn("Bo", "My brother bought a boat"), EpisodeTurn("Ana", "Pepper broke a vase today")]
    for day, turns in ((1, day1), (30, day2)):
        store.add_episode(
            Episode(start=day * DAY, end=day * DAY + 60, participants=[ana, bo], user_transcript=encode_turns(turns))
        )
    return ana, bo


def test_turn_search_windows_speakers_and_time(store: SQLiteStore, encoder: TextEncoder) -> None:
    cache = EmbeddingCache(encoder)
    ana, _ = _two_friends(store)
    hits = search(store, "what is the name of Ana's kitten", cache, TURNS_CONTEXT_SPEAKER).turns
    assert hits[0].speaker == "Ana" and "kitten" in hits[0].text + hits[1].text
    assert all(h.turn_index is not None for h in hits) and hits == sorted(hits, key=lambda h: -h.score)
    # BM25 alone returns only turns sharing a term with the query
    only = search(store, "sailing", cache, TURNS_BM25).turns
    assert [h.text for h in only] == ["I went sailing with my brother"]
    # time filters keep the episodes that overlap the window
    late = search(store, "brother", cache, TURNS_BM25, SearchFilters(since=10 * DAY)).turns
    assert [h.text for h in late] == ["My brother bought a boat"]
    assert search(store, "brother", cache, TURNS_BM25, SearchFilters(until=0.5 * DAY)).turns == []
    # a prebuilt corpus gives the same answer as a fresh one
    corpus = TurnCorpus(store, cache, TURNS_CONTEXT_SPEAKER.turns or TurnSearch(), SearchFilters())
    again = search(store, "what is the name of Ana's kitten", cache, TURNS_CONTEXT_SPEAKER, corpus=corpus).turns
    assert [(h.episode.id, h.turn_index) for h in again] == [(h.episode.id, h.turn_index) for h in hits]
    assert (
        search(store, "  ", cache).turns == []
        and search(store, "x", cache, filters=SearchFilters(user_id=ana)).facts == []
    )


def test_fact_search_and_empty_store(store: SQLiteStore, encoder: TextEncoder) -> None:
    cache = EmbeddingCache(encoder)
    assert search(store, "anything", cache).turns == []
    u = store.create_user("Ravi")
    store.add_fact(Fact(user_id=u.id, text="plays cricket on Sundays"))
    store.add_fact(Fact(user_id=u.id, text="is vegetarian"))
    res = search(store, "which sport", cache, DEFAULT, SearchFilters(user_id=u.id))
    assert res.facts[0].fact.text == "plays cricket on Sundays" and res.turns == []
    assert search(store, "which sport", cache, DEFAULT).facts == []  # facts need a user
