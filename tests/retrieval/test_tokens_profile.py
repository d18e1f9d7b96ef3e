from __future__ import annotations

import time

from egomem.retrieval.encoder import TextEncoder
from egomem.retrieval.profile import ProfileRenderer
from egomem.schemas import Fact, FactKind, Relation
from egomem.store.sqlite import SQLiteStore


def test_count_and_truncate_use_real_wordpieces(encoder: TextEncoder) -> None:
    text = "Emily enjoys photosynthesis experiments"
    n = encoder.count_tokens(text)
    assert n > len(text.split())  # "photosynthesis" splits into several word pieces
    for budget in range(1, n + 1):
        cut = encoder.truncate(text, budget)
        assert encoder.count_tokens(cut) <= budget
        assert text.startswith(cut)
        # never mid-word: the cut ends at the end of the text or before a space
        assert cut == "" or len(cut) == len(text) or text[len(cut)] == " "
    assert encoder.truncate(text, 0) == ""
    assert encoder.count_tokens("") == 0


def test_profile_respects_budget_and_ranks(store: SQLiteStore, encoder: TextEncoder) -> None:
    emily = store.create_user("Emily")
    john = store.create_user("John")
    store.add_relation(Relation(subject_id=emily.id, relation="colleague", object_id=john.id))
    store.add_relation(Relation(subject_id=emily.id, relation="sister", object_name="Zoë"))
    store.add_fact(Fact(user_id=emily.id, text="Emily is allergic to peanuts", confidence=1.0, importance=1.0))
    for i in range(200):
        store.add_fact(
            Fact(user_id=emily.id, text=f"Emily once mentioned trivia item number {i}", confidence=0.3, importance=0.1)
        )
    store.add_fact(Fact(user_id=emily.id, kind=FactKind.PREFERENCE, text="Emily prefers green tea"))
    old = time.time() - 90 * 86400
    store.add_fact(Fact(user_id=emily.id, kind=FactKind.SUMMARY, text="Talked about a trip", valid_from=old))
    store.add_fact(Fact(user_id=emily.id, kind=FactKind.SUMMARY, text="Planned a birthday party"))
    for budget in (40, 128, 512):
        chunk = ProfileRenderer(store, encoder, budget=budget).render(emily.id)
        assert chunk.level == 1 and chunk.user_id == emily.id
        assert chunk.tokens == encoder.count_tokens(chunk.text) <= budget
        assert chunk.text.startswith("Current user: Emily")
    chunk = ProfileRenderer(store, encoder, budget=512).render(emily.id)
    assert chunk.tokens > 400  # the budget is used, not wasted
    # the important fact, the preference and the relations beat the 200 trivia items
    assert "allergic to peanuts" in chunk.text and "green tea" in chunk.text
    assert "John: colleague" in chunk.text and "Zoë: sister" in chunk.text
    assert chunk.text.index("Planned a birthday") < chunk.text.index("Talked about a trip")  # newest first
    # a fact cut at the budget never ends inside a word
    for line in chunk.text.splitlines():
        assert not line.endswith("##")


def test_profile_empty_cases(store: SQLiteStore, encoder: TextEncoder) -> None:
    r = ProfileRenderer(store, encoder)
    assert r.render(None).text == "" and r.render(None).tokens == 0
    assert r.render("u_missing").text == ""
    lone = store.create_user(None)
    chunk = r.render(lone.id)
    assert chunk.text == "Current user: name not known yet"
    assert chunk.tokens == encoder.count_tokens(chunk.text)


def test_pluggable_scorer_changes_what_fits(store: SQLiteStore, encoder: TextEncoder) -> None:
    u = store.create_user("Ana")
    a = store.add_fact(Fact(user_id=u.id, text="Ana collects antique maps from Lisbon", importance=1.0))
    b = store.add_fact(Fact(user_id=u.id, text="Ana runs marathons every spring season", importance=0.0))
    budget = encoder.count_tokens("Current user: Ana\nFacts:\n- " + a.text) + 1
    default = ProfileRenderer(store, encoder, budget=budget).render(u.id).text
    assert a.text in default and b.text not in default
    flipped = ProfileRenderer(store, encoder, budget=budget, scorer=lambda f, _t: 1.0 - f.importance).render(u.id)
    assert b.text in flipped.text and a.text not in flipped.text
