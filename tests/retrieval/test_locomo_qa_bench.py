"""`egomem bench locomo-qa` on the small LoCoMo sample (tests/data/retrieval/locomo_sample.json)."""

from __future__ import annotations

import json
from pathlib import Path

from egomem.bench import BenchOptions, available, run_bench


def test_locomo_qa_quick_on_sample(test_data: Path, tmp_path: Path) -> None:
    assert "locomo-qa" in available()  # the module is locomo_qa.py
    out = tmp_path / "q.json"
    run_bench("locomo-qa", BenchOptions(data=test_data / "retrieval" / "locomo_sample.json", json_path=out, quick=True))
    record = json.loads(out.read_text())
    assert record["benchmark"] == "locomo-qa" and record["command"].startswith("egomem bench locomo-qa")
    m = record["metrics"]
    assert m["questions"] == 15 and m["llm"] is None
    for name in ("multi_round", "single_shot", "plain_search"):
        r = m[name]
        assert 0.0 <= r["recall_at_10"] <= 1.0 and set(r["recall_at_10_by_category"]) == {"1", "2", "3", "4"}
        assert r["test"]["recall_at_10"] is None  # one conversation: all of it is dev
    assert m["single_shot"]["mean_rounds"] <= 1.0 < m["multi_round"]["mean_rounds"]
    assert m["multi_round"]["config"]["max_rounds"] > 1 == m["single_shot"]["config"]["max_rounds"]
    # round 1 of ask is the product's search: single-shot scores as the plain search does (no empty answers here)
    if m["single_shot"]["empty_answers"] == 0:
        assert m["single_shot"]["recall_at_10"] == m["plain_search"]["recall_at_10"]
