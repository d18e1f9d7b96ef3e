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
    # Ingested through the product's memory: the rules extractor wrote facts, each traced to its turn.
    ing = m["ingest"]
    assert ing["extractor"] == "rules" and ing["speaker_sessions"] > 0 and ing["facts"] > 0
    assert ing["facts_mapped_to_turns"] > 0 and not ing["failed"]


def test_token_f1_is_squad_style() -> None:
    from egomem.bench._locomo_answers import token_f1

    assert token_f1("The Eiffel Tower!", "eiffel tower") == 1.0
    assert token_f1("in Paris, France", "Paris") == 0.5
    assert token_f1("", "Paris") == 0.0 and token_f1("", "") == 1.0
    assert token_f1("London", "Paris") == 0.0


def test_bad_options_are_one_line_errors(test_data: Path, tmp_path: Path) -> None:
    import pytest

    from egomem.errors import InputError

    opts = BenchOptions(data=test_data / "retrieval" / "locomo_sample.json", quick=True, extra={"extractor": "gpt9"})
    with pytest.raises(InputError, match="extractor must be one of rules, local"):
        run_bench("locomo-qa", opts)
