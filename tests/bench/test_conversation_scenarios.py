"""The conversation benchmark's scenario generator and template split."""

from __future__ import annotations

from egomem.bench.convo.score import has_keys, states
from egomem_eval.convo.scenario import generate
from egomem_eval.convo.templates import NO_MEMORY, TEXTS, all_templates, split_of


def test_at_least_150_templates_split_into_disjoint_halves_with_every_kind() -> None:
    ts = all_templates()
    assert len(ts) >= 150
    assert len({t.id for t in ts}) == len(ts)
    dev = {t.id for t in ts if split_of(t) == "dev"}
    test = {t.id for t in ts if split_of(t) == "test"}
    assert dev.isdisjoint(test) and len(dev) + len(test) == len(ts)
    for kind in TEXTS:
        assert any(split_of(t) == "dev" for t in ts if t.kind == kind), kind
        assert any(split_of(t) == "test" for t in ts if t.kind == kind), kind


def test_generator_is_deterministic_and_uses_one_split_only() -> None:
    a, b = generate("dev", 3), generate("dev", 3)
    assert [[u.text for u in s.turns] for s in a.sessions] == [[u.text for u in s.turns] for s in b.sessions]
    assert generate("dev", 4).sessions != a.sessions
    by_id = {t.id: t for t in all_templates()}
    for split in ("dev", "test"):
        for seed in range(5):
            sc = generate(split, seed)
            assert 2 <= len(sc.people) <= 3 and len({p.name for p in sc.people}) == len(sc.people)
            assert {split_of(by_id[u.template]) for s in sc.sessions for u in s.turns} == {split}


def test_every_gold_fact_is_in_its_own_persons_transcript() -> None:
    for split in ("dev", "test"):
        for seed in range(10):
            sc = generate(split, seed)
            said = {p: " ".join(u.text for s in sc.sessions if s.person == p for u in s.turns) for p in sc.names}
            for f in sc.facts:
                assert has_keys(said[f.person], f.keys), (f, said[f.person])
            for r in sc.relations:
                speaker = r.obj if r.inverse else r.subject
                assert r.obj.lower() in said[speaker].lower() or r.subject.lower() in said[speaker].lower()
            for c in sc.changes:
                assert sc.fact(c.old).retracted
            for q in sc.level2:
                assert not sc.fact(q.fact).retracted


def test_no_memory_turns_state_no_gold_fact_of_anyone() -> None:
    for sc in [generate(split, seed) for split in ("dev", "test") for seed in range(20)]:
        for s in sc.sessions:
            for u in s.turns:
                if u.kind in NO_MEMORY:
                    assert not any(states(u.text, f) for f in sc.facts), u.text
