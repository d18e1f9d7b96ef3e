"""bench identity: the scorer counts each kind of wrong answer, and a tiny world of two real
people (tests/data photos and LibriSpeech speech) runs end to end through the product."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from egomem.bench._identity_drive import run_world
from egomem.bench.identity import bench_config
from egomem.perception.audio import load_audio
from egomem.providers import create
from egomem.runtime.build import Models
from egomem.store.sqlite import SQLiteStore
from egomem_eval.identity.observation_cache import cache_models
from egomem_eval.identity.world_score import FactRecord, VisitRecord, pool_worlds, score_world
from egomem_eval.identity.worlds import Pool, generate_world, speech_windows

NAMES = {"p0": "Anna", "p1": "Bob"}


def _visits(
    users: dict[tuple[str, int], str], greet: dict[tuple[str, int], list[str]] | None = None
) -> list[VisitRecord]:
    """Anna and Bob on days 1 and 2, both say their name on day 1; `users`: (person, day) -> user."""
    greet = greet or {}
    return [
        VisitRecord(p, d, True, d == 1, users[(p, d)], [None, users[(p, d)]], greet.get((p, d), []))
        for d in (1, 2)
        for p in ("p0", "p1")
    ]


RIGHT = {("p0", 1): "u0", ("p1", 1): "u1", ("p0", 2): "u0", ("p1", 2): "u1"}
GREET_RIGHT = {("p0", 2): ["Hi Anna, good to see you again!"], ("p1", 2): ["Hi Bob, good to see you again!"]}


def test_scorer_all_right() -> None:
    facts = [FactRecord("u0", "p0", "works as a nurse"), FactRecord("u1", "p1", "lives in Leeds")]
    s = score_world(NAMES, _visits(RIGHT, GREET_RIGHT), facts)
    assert (s["merges"], s["split_people"], s["misattributed_facts"]) == (0, 0, 0)
    assert (s["day2_eligible"], s["day2_right"], s["day2_wrong"]) == (2, 2, 0)
    assert s["person_days"] == 4 and s["users"] == 2 and s["facts"] == 2
    assert s["latencies_polls"] == [2, 2, 2, 2] and s["never_decided"] == 0


def test_scorer_counts_a_merged_pair() -> None:
    merged = {**RIGHT, ("p1", 1): "u0", ("p1", 2): "u0"}
    s = score_world(NAMES, _visits(merged), [])
    assert s["merges"] == 1 and s["merged_users"] == 1
    assert s["merged_pairs"] == [["Anna", "Bob"]]
    assert pool_worlds([s])["worlds_with_merges"] == 1


def test_scorer_counts_a_split_and_a_fact_on_the_wrong_person() -> None:
    split = {**RIGHT, ("p1", 2): "u2"}
    facts = [
        FactRecord("u0", "p0", "works as a nurse"),
        FactRecord("u0", "p1", "lives in Leeds"),  # Bob's fact on Anna's user
        FactRecord("u2", "p1", "likes chess"),  # Bob's, on his second (split) user: the right person
        FactRecord("u0", None, "unknown source"),
    ]
    s = score_world(NAMES, _visits(split), facts)
    assert s["split_people"] == 1 and s["merges"] == 0
    assert s["misattributed_facts"] == 1 and s["facts"] == 3 and s["facts_unknown_source"] == 1
    assert s["misattributed"] == [{"text": "lives in Leeds", "from": "Bob"}]
    p = pool_worlds([s])
    assert p["split_rate"] == pytest.approx(0.5) and p["misattributed_fact_rate"] == pytest.approx(1 / 3)


def test_scorer_counts_a_wrong_name_greeting_and_asks() -> None:
    greet = {
        ("p0", 2): ["Hi Bob, good to see you again!"],
        ("p1", 2): ["Hello! I don't know your name yet. What's your name?"],
    }
    s = score_world(NAMES, _visits(RIGHT, greet), [])
    assert (s["day2_right"], s["day2_wrong"], s["day2_eligible"]) == (0, 1, 2)
    assert s["asks"] == 1
    assert [g["outcome"] for g in s["greetings_not_right"]] == ["wrong", "none"]
    assert pool_worlds([s])["day2_right_rate"] == 0.0


def test_scorer_never_named_person_greeted_by_a_name_is_counted() -> None:
    visits = [
        VisitRecord("p0", 1, True, False, "u0", ["u0"]),
        VisitRecord("p0", 2, True, False, "u0", ["u0"], ["Hi Bob, good to see you again!"]),
        VisitRecord("p1", 1, True, True, "u1", [None, None, None]),  # Level 1 never held Bob's user
    ]
    s = score_world(NAMES, visits, [])
    assert s["never_named_people"] == 1 and s["never_named_greeted"] == 1
    assert s["day2_eligible"] == 0  # Anna never said her name; Bob has no day 2
    assert s["never_decided"] == 1


def test_speech_windows() -> None:
    sr = 16000
    w = speech_windows(np.arange(10 * sr, dtype=np.float32), 3.0, 2.0, sr)
    assert len(w) == 4 and all(x.size == 3 * sr for x in w) and w[1][0] == 2 * sr
    assert len(speech_windows(np.zeros(sr, np.float32), 3.0, 2.0, sr)) == 1


def _tiny_pool(test_data: Path) -> Pool:
    faces = {name: sorted((test_data / "faces" / name).glob("*.jpg")) for name in ("Colin_Powell", "Ariel_Sharon")}
    speech = {
        spk: np.concatenate([load_audio(p) for p in sorted((test_data / "speech" / "eval" / spk).glob("*.flac"))])
        for spk in ("367", "2414")
    }
    return Pool("test", faces, speech, [(("367", "Colin_Powell"), ("2414", "Ariel_Sharon"))])


def test_tiny_world_end_to_end(tmp_path: Path, test_data: Path) -> None:
    pool = _tiny_pool(test_data)
    world = generate_world(pool, 0, n_people=2, days=2)
    assert {(p.speaker, p.face) for p in world.people} == {("367", "Colin_Powell"), ("2414", "Ariel_Sharon")}
    assert all(p.hard for p in world.people)
    cfg = bench_config("rules")
    models = Models(cfg)
    face_cache, voice_cache = cache_models(models, tmp_path / "cache")
    llm = create("llm", cfg.llm, models.context)
    store = SQLiteStore(tmp_path / "memory.db")
    try:
        done = run_world(world, store, models, llm, pool.speech)
    finally:
        store.close()
    assert len(done.visits) == len(world.visits) and len(done.poll_s) > 0
    s = score_world({p.key: p.name for p in world.people}, done.visits, done.facts)
    # Two different people, clearly told apart by voice: two users, one each, facts on their own.
    assert s["users"] == 2 and s["merges"] == 0 and s["split_people"] == 0
    assert s["facts"] >= 4 and s["misattributed_facts"] == 0
    assert s["never_decided"] == 0 and max(s["latencies_polls"]) <= 5
    said_name = {v.person for v in world.visits if v.day == 1 and v.says_name}
    assert s["day2_eligible"] == len(said_name) and s["day2_right"] == len(said_name)
    # Repeated photos and speech windows are embedded once.
    assert face_cache.hits > 0 and voice_cache.hits > 0
