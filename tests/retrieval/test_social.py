from __future__ import annotations

from egomem.retrieval.dense import EmbeddingCache
from egomem.retrieval.encoder import TextEncoder
from egomem.retrieval.social import CandidateIndex, candidates_for, rank_candidates, render_level2
from egomem.schemas import Fact, Relation
from egomem.store.sqlite import SQLiteStore


def paper_graph(store: SQLiteStore) -> dict[str, str]:
    ids = {n: store.create_user(n).id for n in ("Emily", "John", "Sarah", "Mike", "Anna")}
    for name, rel in (("John", "colleague"), ("Sarah", "mother"), ("Mike", "colleague"), ("Anna", "neighbour")):
        store.add_relation(Relation(subject_id=ids["Emily"], relation=rel, object_id=ids[name]))
    facts = {
        "John": ["John loves playing tennis on weekends", "John has a golden retriever", "John drinks black coffee"],
        "Sarah": ["Sarah plays tennis at the club", "Sarah grows tomatoes"],
        "Mike": ["Mike is learning the piano", "Mike supports Arsenal"],
        "Anna": ["Anna is a tennis coach", "Anna bakes sourdough bread"],
    }
    for name, items in facts.items():
        for t in items:
            store.add_fact(Fact(user_id=ids[name], text=t))
    return ids


def test_paper_example_colleague_tennis(store: SQLiteStore, encoder: TextEncoder) -> None:
    ids = paper_graph(store)
    cache = CandidateIndex(EmbeddingCache(encoder))
    hits = rank_candidates(candidates_for(store, ids["Emily"]), ["colleague"], ["tennis"], cache, k=3)
    assert hits[0][0].text == "John loves playing tennis on weekends"
    assert all(c.relation == "colleague" for c, _ in hits)  # BM25 kept only colleagues
    chunk = render_level2(hits, encoder, 256, ids["Emily"])
    assert "John, colleague: John loves playing tennis" in chunk.text.splitlines()[0]
    assert chunk.level == 2 and chunk.tokens <= 256


def test_relation_only_keyword_only_and_empty(store: SQLiteStore, encoder: TextEncoder) -> None:
    ids = paper_graph(store)
    cache = CandidateIndex(EmbeddingCache(encoder))
    cands = candidates_for(store, ids["Emily"])
    mother = rank_candidates(cands, ["mother"], [], cache, k=5)
    assert {c.person for c, _ in mother} == {"Sarah"}
    bread = rank_candidates(cands, [], ["bread", "baking"], cache, k=1)
    assert bread[0][0].text == "Anna bakes sourdough bread"
    assert rank_candidates(cands, [], [], cache, k=5) == []
    # a relation word the graph does not use falls back to everyone, ranked by keywords
    dog = rank_candidates(cands, ["cousin"], ["dog"], cache, k=1)
    assert dog[0][0].text == "John has a golden retriever"


def test_no_relations_unknown_user_and_budget(store: SQLiteStore, encoder: TextEncoder) -> None:
    cache = CandidateIndex(EmbeddingCache(encoder))
    lone = store.create_user("Lone")
    assert candidates_for(store, lone.id) == []
    assert candidates_for(store, "u_missing") == []
    ids = paper_graph(store)
    hits = rank_candidates(candidates_for(store, ids["Emily"]), [], ["tennis"], cache, k=50)
    chunk = render_level2(hits, encoder, 24, ids["Emily"])
    assert 0 < chunk.tokens <= 24


def test_placeholder_and_reverse_edges(store: SQLiteStore, encoder: TextEncoder) -> None:
    emily = store.create_user("Émilie")
    mia = store.create_user("Mia")
    store.add_relation(Relation(subject_id=emily.id, relation="friend", object_name="Łukasz"))
    store.add_relation(Relation(subject_id=mia.id, relation="mother", object_id=emily.id))
    store.add_fact(Fact(user_id=mia.id, text="Mia studies marine biology"))
    docs = [c.document for c in candidates_for(store, emily.id)]
    assert "Łukasz, friend" in docs
    # Emily is Mia's mother: read backwards, Mia is Emily's child (her gender is not known).
    assert "Mia, child: Mia studies marine biology" in docs


def test_inverse_relation_found_by_the_gendered_word(store: SQLiteStore, encoder: TextEncoder) -> None:
    """A says B is his sister; B asks about her brother: A is found (as a sibling), and as
    her brother once someone else's words say A is male."""
    cache = EmbeddingCache(encoder)
    a, b = store.create_user("Tom"), store.create_user("Anna")
    store.add_relation(Relation(subject_id=a.id, relation="sister", object_id=b.id))
    store.add_fact(Fact(user_id=a.id, text="plays the cello"))
    hits = rank_candidates(candidates_for(store, b.id), ["brother"], ["music"], CandidateIndex(cache), k=3)
    assert [(c.person, c.relation) for c, _ in hits] == [("Tom", "sibling")]
    mum = store.create_user("Rosa")
    store.add_relation(Relation(subject_id=mum.id, relation="son", object_id=a.id))
    assert [c.relation for c in candidates_for(store, b.id)] == ["brother"]
    # Friend and colleague read the same both ways; boss reads as employee.
    store.add_relation(Relation(subject_id=a.id, relation="boss", object_id=mum.id))
    assert {c.relation for c in candidates_for(store, mum.id)} == {"son", "employee"}
