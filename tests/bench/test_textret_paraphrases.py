"""The second textret query set (bench/data/textret_paraphrases.json): paraphrases that share
no content word or stem with their gold fact, and same-relation distractors on nearby topics."""

from __future__ import annotations

import json
import re
from pathlib import Path

from egomem.bench import BenchOptions, run_bench
from egomem.bench.textret import TOPICS, generate, generate_hard, load_paraphrases

STOP = frozenset(
    """a an and are as at be but by can can't do does for from has have in into is it its my no not of off
    on or so than that the their them then they this to too up was with who which what when where while
    over under down out about after before every each some few very just only new old goes go going get gets
    s t n""".split()
)
SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "ers", "er", "ed", "es", "ly", "s", "e", "y")


def stem(word: str) -> str:
    """A plain suffix stripper: enough to make loves/love, plays/player, cycles/cycling meet."""
    for suf in SUFFIXES:
        if word.endswith(suf) and len(word) - len(suf) >= 3:
            return word[: -len(suf)]
    return word


def content_words(text: str) -> set[str]:
    words = re.findall(r"[a-zà-ÿ0-9]+", text.lower().replace("{n}", " "))
    return {w for w in words if w not in STOP and len(w) > 1}


def clash(a: str, b: str) -> bool:
    """Same word or stem, a shared 5-letter beginning, or one word inside the other."""
    sa, sb = stem(a), stem(b)
    if a == b or sa == sb:
        return True
    if a[:5] == b[:5] and min(len(a), len(b)) >= 5:
        return True
    return any(len(stem(x)) >= 4 and stem(x) in y for x, y in ((a, b), (b, a)))


def test_the_checker_catches_shared_stems() -> None:
    assert clash("loves", "love") and clash("plays", "player") and clash("photos", "photography")
    assert clash("cycles", "bicycle") and clash("allergic", "allergy") and clash("sleeping", "sleep")
    assert not clash("tennis", "court") and not clash("dawn", "sunrise")
    assert content_words("{n} loves playing tennis on weekends") == {"loves", "playing", "tennis", "weekends"}


def test_new_paraphrases_share_no_content_word_with_their_gold_fact() -> None:
    data = load_paraphrases()
    assert set(data) == {t[0] for t in TOPICS}
    bad = []
    for topic, _, fact in TOPICS:
        gold = content_words(fact) | content_words(topic)
        for para in data[topic].paraphrases:
            assert content_words(para), para
            bad += [(topic, para, g, p) for g in gold for p in content_words(para) if clash(g, p)]
    assert bad == []


def test_distractors_are_new_topics_for_the_same_person() -> None:
    data = load_paraphrases()
    texts = [d for v in data.values() for d in v.distractors]
    assert len(texts) == len(set(texts)) == 2 * len(TOPICS)
    assert {t[2] for t in TOPICS}.isdisjoint(texts)
    assert all(d.startswith("{n}") for d in texts)


def test_hard_pool_adds_distractors_beside_each_gold() -> None:
    cands, questions = generate(120, 30)
    hard, hard_q = generate_hard(cands, questions)
    assert len(hard_q) == len(questions)
    docs = [c.document for c in hard]
    assert len(docs) == len(set(docs))  # gold stays the only right answer
    data = load_paraphrases()
    for (rel, kws, gold), (_, _, old_gold) in zip(hard_q, questions, strict=True):
        g = hard[gold]
        assert g.fact_id == cands[old_gold].fact_id and rel == [g.relation]
        topic = TOPICS[int((g.fact_id or "").split(":")[2])][0]
        assert ", ".join(kws) in data[topic].paraphrases
        same = {c.text for c in hard if c.person_id == g.person_id and c.relation == g.relation}
        assert {d.format(n=g.person) for d in data[topic].distractors} <= same


def test_bench_reports_both_sets(tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    run_bench("textret", BenchOptions(json_path=out, quick=True, extra={"scales": ""}))
    m = json.loads(out.read_text())["metrics"]
    for key in ("topic_word", "old_paraphrase", "new_paraphrase", "new_topic_word"):
        assert 0.0 <= m["sets"][key]["pass_at_1"] <= m["sets"][key]["pass_at_5"] <= 1.0
    assert m["sets"]["new_paraphrase"]["questions"] == m["questions"] == 20
    assert m["sets"]["old_paraphrase"]["questions"] == 10
    assert m["sets"]["new_paraphrase"]["candidates"] > m["candidates"] == 60
