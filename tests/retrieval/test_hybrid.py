from __future__ import annotations

import numpy as np
import pytest

from egomem.errors import InputError
from egomem.retrieval.dense import EmbeddingCache, rrf
from egomem.retrieval.encoder import TextEncoder
from egomem.retrieval.hybrid import search_episodes, search_user_memories
from egomem.schemas import Episode, Fact
from egomem.store.sqlite import SQLiteStore


def test_rrf_fuses_rankings() -> None:
    fused = rrf([np.array([2, 0]), np.array([2, 1])], 3, k=0)
    assert fused.argmax() == 2 and fused[0] == fused[1] == pytest.approx(0.5)


def test_the_encoder_refuses_a_bare_string(encoder: TextEncoder) -> None:
    with pytest.raises(InputError):
        encoder.encode("a string")  # type: ignore[arg-type]


def test_search_user_memories_and_episodes(store: SQLiteStore, encoder: TextEncoder) -> None:
    cache = EmbeddingCache(encoder)
    u = store.create_user("Ravi")
    assert search_user_memories(store, u.id, "cricket", cache) == []
    store.add_fact(Fact(user_id=u.id, text="Ravi plays cricket on Sundays"))
    store.add_fact(Fact(user_id=u.id, text="Ravi is vegetarian"))
    hits = search_user_memories(store, u.id, "which sport does he play", cache, k=1)
    assert hits[0][0].text == "Ravi plays cricket on Sundays"
    store.add_episode(Episode(start=0, end=1, participants=[u.id], summary="Talked about a trip to Kerala"))
    store.add_episode(Episode(start=2, end=3, participants=[u.id], summary="Discussed a new job offer"))
    eps = search_episodes(store, "holiday travel", cache, k=1, user_id=u.id)
    assert eps[0][0].summary == "Talked about a trip to Kerala"
