"""`egomem bench textret`: Level-2 social-graph retrieval on generated graphs (paper style).

A seeded generator builds social graphs (a main user with 3-5 connected people, each
with several facts) until the candidate pool holds 500 (relation, fact) documents, and
200 questions with gold relation words, keywords and the gold fact. Half the questions
name the fact's topic word as keyword; the other half only paraphrase it ("racket
sport" for tennis), which is what a dialog model writes and what dense rerank is for.
Each (relation, topic) occurs once in the pool, so the gold fact is the only right one.
Every question is answered over the whole pool (all graphs are distractors) with the
same `rank_candidates` the retrieval process uses (`RetrievalProcess.retrieve`, Level 2).

The first paraphrases (TOPICS below) often share a word or stem with the fact. A second
query set (bench/data/textret_paraphrases.json, written from the topics alone before any
retrieval ran) asks for the same gold facts with paraphrases that share no content word or
stem with the fact (tests/bench/test_textret_paraphrases.py checks it), in a pool where
each gold fact's person also has two facts on nearby topics ("loves playing tennis" beside
"plays badminton at the sports hall" and "plays squash after work"). The topic word on
that pool is reported too, to separate what the distractors cost from what the
paraphrases cost. Latency: one retrieval = query
embedding + BM25 + rerank over the pool, the index prepared once (as for a stable graph);
the end-to-end figure adds reading the graph from a SQLite store on every query.
"""

from __future__ import annotations

import json
import tempfile
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from egomem.bench import BenchOptions, BenchResult, register
from egomem.retrieval.dense import EmbeddingCache
from egomem.retrieval.encoder import TextEncoder
from egomem.retrieval.social import Candidate, CandidateIndex, candidates_for, rank_candidates
from egomem.schemas import Fact, Relation
from egomem.store.sqlite import SQLiteStore

RELATIONS = [
    "colleague", "mother", "father", "sister", "brother", "neighbour", "friend", "cousin", "boss",
    "classmate", "roommate", "uncle", "aunt", "teammate", "grandmother", "son", "daughter", "wife",
]  # fmt: skip
NAMES = [
    "John", "Mary", "Ahmed", "Li", "Sofia", "Lucas", "Amara", "Kenji", "Olga", "Pedro", "Fatima", "Noah", "Emma",
    "Ravi", "Chloe", "Mateo", "Yuki", "Ingrid", "Kwame", "Elena", "Omar", "Hannah", "Diego", "Mei", "Tom", "Aisha",
    "Lars", "Priya", "Jonas", "Zoë", "Marek", "Nadia", "Sam", "Leila", "Hugo", "Grace", "Ivan", "Rosa", "Ben", "Ana",
]  # fmt: skip
# (topic keyword, paraphrase keywords, fact template)
TOPICS: list[tuple[str, str, str]] = [
    ("tennis", "racket sport", "{n} loves playing tennis on weekends"),
    ("chess", "board game strategy", "{n} plays chess online every evening"),
    ("yoga", "stretching meditation", "{n} goes to a yoga class twice a week"),
    ("hiking", "mountain trails", "{n} goes hiking in the mountains every summer"),
    ("painting", "watercolour art", "{n} paints landscapes in watercolour"),
    ("pottery", "ceramics clay", "{n} takes a pottery course and makes bowls"),
    ("surfing", "ocean waves board", "{n} goes surfing at dawn"),
    ("golf", "golf course club", "{n} plays golf with clients"),
    ("knitting", "wool scarves", "{n} knits scarves for the family"),
    ("photography", "camera pictures", "{n} takes photos with an old film camera"),
    ("gardening", "plants flowers", "{n} grows roses in the garden"),
    ("cycling", "bike rides", "{n} cycles to work every day"),
    ("swimming", "pool laps", "{n} swims laps before breakfast"),
    ("climbing", "bouldering wall", "{n} goes rock climbing at the gym"),
    ("fishing", "lake rod", "{n} goes fishing at the lake"),
    ("skiing", "snow slopes winter", "{n} goes skiing in the Alps each winter"),
    ("dancing", "salsa dance", "{n} dances salsa on Fridays"),
    ("running", "marathon jogging", "{n} is training for a marathon"),
    ("piano", "keyboard instrument", "{n} plays the piano"),
    ("guitar", "string instrument band", "{n} plays guitar in a band"),
    ("violin", "orchestra strings", "{n} plays violin in an orchestra"),
    ("drums", "percussion", "{n} plays the drums"),
    ("sushi", "japanese food raw fish", "{n}'s favourite food is sushi"),
    ("pizza", "italian food", "{n} makes pizza every Saturday"),
    ("curry", "spicy indian dish", "{n} cooks a spicy curry"),
    ("pancakes", "breakfast", "{n} makes pancakes for breakfast"),
    ("peanuts", "nut allergy", "{n} is allergic to peanuts"),
    ("gluten", "bread wheat intolerance", "{n} cannot eat gluten"),
    ("vegetarian", "no meat diet", "{n} is a vegetarian"),
    ("coffee", "espresso caffeine", "{n} drinks three cups of coffee a day"),
    ("tea", "green tea drink", "{n} only drinks green tea"),
    ("dog", "puppy pet", "{n} has a golden retriever"),
    ("cat", "kitten pet", "{n} has two cats"),
    ("parrot", "bird pet", "{n} keeps a talking parrot"),
    ("horse", "riding stables", "{n} rides horses at a stable"),
    ("paris", "france trip", "{n} spent a year living in Paris"),
    ("tokyo", "japan travel", "{n} is planning a trip to Tokyo"),
    ("lisbon", "portugal", "{n} grew up in Lisbon"),
    ("berlin", "germany", "{n} studied in Berlin"),
    ("nurse", "hospital job", "{n} works as a nurse at the hospital"),
    ("pilot", "airline flying", "{n} is an airline pilot"),
    ("teacher", "school job", "{n} teaches maths at a high school"),
    ("lawyer", "law firm", "{n} is a lawyer"),
    ("chef", "restaurant kitchen", "{n} is a chef in a restaurant"),
    ("birthday", "party celebration", "{n}'s birthday is in March"),
    ("wedding", "getting married", "{n} is getting married next spring"),
    ("baby", "newborn pregnant", "{n} is expecting a baby"),
    ("novels", "reading books", "{n} reads crime novels"),
    ("movies", "cinema films", "{n} watches old movies at the cinema"),
    ("football", "soccer match", "{n} supports the local football team"),
    ("basketball", "nba hoops", "{n} plays basketball on Tuesdays"),
    ("video games", "gaming console", "{n} plays video games at night"),
    ("astronomy", "stars telescope", "{n} looks at the stars with a telescope"),
    ("volunteering", "charity shelter", "{n} volunteers at an animal shelter"),
    ("spanish", "learning language", "{n} is learning Spanish"),
    ("car", "vehicle driving", "{n} just bought a red car"),
    ("insomnia", "trouble sleeping", "{n} has trouble sleeping"),
    ("knee", "injury surgery", "{n} had knee surgery last month"),
    ("jazz", "music concerts", "{n} loves jazz concerts"),
    ("camping", "tent outdoors", "{n} goes camping with friends"),
]


def generate(
    n_candidates: int, n_questions: int, seed: int = 0
) -> tuple[list[Candidate], list[tuple[list[str], list[str], int]]]:
    """Candidates (the pool) and questions (relation words, keywords, index of gold)."""
    rng = np.random.default_rng(seed)
    cands: list[Candidate] = []
    used: set[tuple[str, int]] = set()
    unique = True
    graph = 0
    while len(cands) < n_candidates:
        graph += 1
        rels = rng.choice(len(RELATIONS), size=int(rng.integers(3, 6)), replace=False)
        for r in rels:
            rel = RELATIONS[int(r)]
            name = NAMES[int(rng.integers(len(NAMES)))]
            free = [t for t in range(len(TOPICS)) if (rel, t) not in used]
            if len(free) < 6:  # large pools (latency scaling) must repeat (relation, topic)
                unique, free = False, list(range(len(TOPICS)))
            for t in rng.choice(free, size=int(rng.integers(3, 7)), replace=False):
                used.add((rel, int(t)))
                text = TOPICS[int(t)][2].format(n=name)
                cands.append(Candidate(name, rel, text, f"g{graph}:{name}", f"{graph}:{rel}:{int(t)}"))
    cands = cands[:n_candidates]
    questions: list[tuple[list[str], list[str], int]] = []
    for qi, gi in enumerate(rng.choice(len(cands), size=min(n_questions, len(cands)), replace=False)):
        c = cands[int(gi)]
        topic = int(c.fact_id.split(":")[2]) if c.fact_id else 0
        word, para, _ = TOPICS[topic]
        keywords = [word] if qi % 2 == 0 else para.split(" ", 1)
        questions.append(([c.relation], keywords, int(gi)))
    if not unique:
        questions = []  # gold is ambiguous: the large pools measure latency only
    return cands, questions


@dataclass(frozen=True)
class TopicParaphrases:
    paraphrases: tuple[str, ...]  # each a comma list of keywords
    distractors: tuple[str, ...]  # fact templates ("{n} plays squash after work")


def load_paraphrases() -> dict[str, TopicParaphrases]:
    """The second query set's data, by topic word (bench/data/textret_paraphrases.json)."""
    raw = json.loads(resources.files("egomem.bench").joinpath("data/textret_paraphrases.json").read_text("utf-8"))
    return {k: TopicParaphrases(tuple(v["paraphrases"]), tuple(v["distractors"])) for k, v in raw["topics"].items()}


Questions = list[tuple[list[str], list[str], int]]


def generate_hard(cands: list[Candidate], questions: Questions) -> tuple[list[Candidate], Questions]:
    """The second set: the pool plus, beside each question's gold fact, two facts of the same
    person (same relation) on nearby topics; each gold asked with a paraphrase that shares no
    content word with it (alternating between the topic's two)."""
    data = load_paraphrases()
    pool = list(cands)
    added: set[str | None] = set()
    out: Questions = []
    for qi, (rel, _, gold) in enumerate(questions):
        c = cands[gold]
        topic = TOPICS[int(c.fact_id.split(":")[2]) if c.fact_id else 0][0]
        if c.fact_id not in added:
            added.add(c.fact_id)
            for j, d in enumerate(data[topic].distractors):
                pool.append(Candidate(c.person, c.relation, d.format(n=c.person), c.person_id, f"{c.fact_id}:d{j}"))
        para = data[topic].paraphrases[qi % len(data[topic].paraphrases)]
        out.append((rel, [k.strip() for k in para.split(",") if k.strip()], gold))
    return pool, out


def _pct(xs: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs), q)) if xs else float("nan")


def evaluate(
    cands: list[Candidate], questions: list[tuple[list[str], list[str], int]], index: CandidateIndex
) -> dict[str, float]:
    hits1 = hits5 = 0
    lat: list[float] = []
    index.prepared(cands)  # build once, as for a stable graph
    index.cache.embed([c.document for c in cands])
    for rel, kws, gold in questions:
        t0 = time.perf_counter()
        ranked = rank_candidates(cands, rel, kws, index, 5)
        lat.append((time.perf_counter() - t0) * 1000)
        ids = [c.fact_id for c, _ in ranked]
        hits1 += int(ids[:1] == [cands[gold].fact_id])
        hits5 += int(cands[gold].fact_id in ids)
    n = max(len(questions), 1)
    return {
        "pass_at_1": hits1 / n,
        "pass_at_5": hits5 / n,
        "latency_ms_p50": _pct(lat, 50),
        "latency_ms_p95": _pct(lat, 95),
    }


def _latency_only(n: int, index: CandidateIndex, queries: int) -> dict[str, float]:
    cands, _ = generate(n, 0, seed=1)
    t0 = time.perf_counter()
    index.prepared(cands).matrix()
    build_s = time.perf_counter() - t0
    rng = np.random.default_rng(2)
    lat = []
    for _ in range(queries):
        c = cands[int(rng.integers(len(cands)))]
        t0 = time.perf_counter()
        rank_candidates(cands, [c.relation], [TOPICS[int(rng.integers(len(TOPICS)))][0]], index, 5)
        lat.append((time.perf_counter() - t0) * 1000)
    return {"candidates": n, "index_build_s": build_s, "latency_ms_p50": _pct(lat, 50), "latency_ms_p95": _pct(lat, 95)}


def _end_to_end(
    cands: list[Candidate], questions: list[tuple[list[str], list[str], int]], index: CandidateIndex
) -> float:
    """p95 ms of reading the asking user's graph from SQLite + ranking (the process path)."""
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(Path(tmp) / "textret.db")
        me = store.create_user("Me")
        people: dict[str | None, str] = {}
        with store.transaction():
            for c in cands:
                if c.person_id not in people:
                    uid = store.create_user(c.person).id
                    people[c.person_id] = uid
                    store.add_relation(Relation(subject_id=me.id, relation=c.relation, object_id=uid))
                store.add_fact(Fact(user_id=people[c.person_id], text=c.text))
        lat = []
        for rel, kws, _ in questions:
            t0 = time.perf_counter()
            rank_candidates(candidates_for(store, me.id), rel, kws, index, 5)
            lat.append((time.perf_counter() - t0) * 1000)
        store.close()
    return _pct(lat, 95)


@register("textret")
def run(options: BenchOptions) -> BenchResult:
    quick = options.quick
    n_cands = int(options.extra.get("candidates", 60 if quick else 500))
    n_q = int(options.extra.get("questions", 20 if quick else 200))
    scales = [int(x) for x in options.extra.get("scales", "" if quick else "5000,50000").split(",") if x]
    threads = options.extra.get("threads", "1")
    encoder = TextEncoder(threads=int(threads) if threads else None)
    index = CandidateIndex(EmbeddingCache(encoder))
    encoder.encode(["warm up"])
    cands, questions = generate(n_cands, n_q)
    m = evaluate(cands, questions, index)
    by_kind: dict[str, dict[str, float]] = {}
    for name, sel in (("topic word", 0), ("paraphrase", 1)):
        sub = questions[sel::2]
        by_kind[name] = evaluate(cands, sub, index)
    hard, hard_q = generate_hard(cands, questions)
    topic_q = [(rel, [TOPICS[int((cands[g].fact_id or "0:0:0").split(":")[2])][0]], g) for rel, _, g in questions]
    sets: dict[str, dict[str, float]] = {
        "topic_word": {**by_kind["topic word"], "questions": len(questions[0::2]), "candidates": len(cands)},
        "old_paraphrase": {**by_kind["paraphrase"], "questions": len(questions[1::2]), "candidates": len(cands)},
        "new_paraphrase": {**evaluate(hard, hard_q, index), "questions": len(hard_q), "candidates": len(hard)},
        "new_topic_word": {**evaluate(hard, topic_q, index), "questions": len(topic_q), "candidates": len(hard)},
    }
    m["latency_ms_p95_end_to_end"] = _end_to_end(cands, questions, index)
    metrics: dict[str, object] = {**m, "candidates": len(cands), "questions": len(questions)}
    rows: list[list[object]] = [
        [f"all ({len(questions)})", m["pass_at_1"], m["pass_at_5"], m["latency_ms_p50"], m["latency_ms_p95"]]
    ]
    rows += [
        [f"keywords: {k}", v["pass_at_1"], v["pass_at_5"], v["latency_ms_p50"], v["latency_ms_p95"]]
        for k, v in by_kind.items()
    ]
    metrics["by_keyword_kind"] = by_kind
    metrics["sets"] = sets
    labels = {
        "topic_word": "set 1: topic word",
        "old_paraphrase": "set 1: paraphrase (may share a stem)",
        "new_paraphrase": "set 2: paraphrase, no shared word, + distractors",
        "new_topic_word": "set 2 pool: topic word, + distractors",
    }
    set_rows: list[list[object]] = [
        [labels[k], v["questions"], v["candidates"], v["pass_at_1"], v["pass_at_5"]] for k, v in sets.items()
    ]
    tables: list[tuple[str, list[str], list[list[object]]]] = [
        (
            f"textret: {len(cands)} candidates, BM25(relation) -> dense rerank(keywords)",
            ["questions", "pass@1", "pass@5", "p50 ms", "p95 ms"],
            rows,
        ),
        ("query sets (gold facts and pools)", ["set", "questions", "candidates", "pass@1", "pass@5"], set_rows),
    ]
    scale_rows: list[list[object]] = [[len(cands), float("nan"), m["latency_ms_p50"], m["latency_ms_p95"]]]
    scaling: list[dict[str, float]] = []
    for n in scales:
        s = _latency_only(n, index, 50)
        scaling.append(s)
        scale_rows.append([n, s["index_build_s"], s["latency_ms_p50"], s["latency_ms_p95"]])
    metrics["scaling"] = scaling
    tables.append(
        ("latency scaling (index prepared once)", ["candidates", "index build s", "p50 ms", "p95 ms"], scale_rows)
    )
    notes = [
        f"end-to-end p95 with the graph read from SQLite each query: {m['latency_ms_p95_end_to_end']:.1f} ms",
        f"torch threads: {threads or 'default'}; paper: pass@5 0.960, < 0.1 s on a GPU",
    ]
    return BenchResult("textret", metrics, tables, notes)
