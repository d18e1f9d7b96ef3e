from __future__ import annotations

import json
from pathlib import Path

import pytest

from egomem.bench import BenchOptions, run_bench
from egomem.errors import InputError
from egomem_eval.locomo import load_locomo


def test_textret_quick_runs_and_reports(tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    res = run_bench("textret", BenchOptions(json_path=out, quick=True))
    m = json.loads(out.read_text())["metrics"]
    for key in ("pass_at_1", "pass_at_5", "latency_ms_p50", "latency_ms_p95"):
        assert key in m
    assert m["candidates"] == 60 and m["questions"] == 20
    assert 0.8 <= m["pass_at_5"] <= 1.0 and m["pass_at_1"] <= m["pass_at_5"]
    assert 0 < m["latency_ms_p50"] <= m["latency_ms_p95"]
    assert res.tables


def test_locomo_quick_on_sample(test_data: Path, tmp_path: Path) -> None:
    sample = test_data / "retrieval" / "locomo_sample.json"
    out = tmp_path / "l.json"
    run_bench("locomo", BenchOptions(data=sample, json_path=out, quick=True))
    m = json.loads(out.read_text())["metrics"]
    assert m["questions"] == 15 and m["malformed_evidence_ids"] == 1 and m["questions_without_evidence"] == 1
    for r in (*m["ablations"].values(), m["product"]):
        assert 0.0 <= r["recall_at_5"] <= r["recall_at_10"] <= r["recall_at_20"] <= 1.0
        assert set(r["recall_at_10_by_category"]) <= {"1", "2", "3", "4"}
        assert r["test_recall_at_10"] is None  # one conversation: all of it is dev
    assert set(m["ablations"]) == {"bm25", "dense", "hybrid", "context", "speaker"}
    # The product's recipe is the last ablation row: same search, same figures.
    assert m["product"]["recall_at_10"] == m["ablations"]["speaker"]["recall_at_10"]
    assert m["selection"]["chosen"] in m["selection"]["dev_recall_at_10"]
    # Measured: the product's R@10 is 14/15 (BM25 alone 0.63, dense alone 0.87). Margin: one
    # question; and the product's recipe must beat each single retriever it is made of.
    assert m["product"]["recall_at_10"] >= 13 / 15
    assert m["product"]["recall_at_10"] > m["ablations"]["bm25"]["recall_at_10"]
    assert m["product"]["recall_at_10"] >= m["ablations"]["dense"]["recall_at_10"]


def test_locomo_bad_input(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        load_locomo(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(InputError):
        load_locomo(bad)
    bad.write_text("{}")
    with pytest.raises(InputError):
        load_locomo(bad)
    bad.write_text('[{"conversation": {"session_1": [{"text": "hi"}]}}]')
    with pytest.raises(InputError):
        load_locomo(bad)
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    assert load_locomo(empty) == ([], {"malformed_evidence_ids": 0, "questions_without_evidence": 0})
