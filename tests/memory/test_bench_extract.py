"""`egomem bench extract --quick` on a two-session LoCoMo excerpt (tests/data/memory)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from egomem.bench import BenchOptions, run_bench
from egomem.errors import InputError


def test_bench_extract_quick(test_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "extract.json"
    res = run_bench(
        "extract", BenchOptions(data=test_data / "memory" / "locomo_sample.json", json_path=out, quick=True)
    )
    m = json.loads(out.read_text())["metrics"]
    assert m["sessions"] == 2 and m["rules"]["observations"] == 14 and m["rules"]["items"] >= 3
    # Measured with the rules: recall 5/14, precision 3/3 (chance 1/3). Margin: one observation
    # fewer found, one wrong item more; and always better than chance.
    assert m["recall"] >= 4 / 14 and m["precision"] >= 2 / 3
    assert m["precision"] > m["rules"]["chance_precision"]
    # The run's own examples: the best match really is above the threshold it reports.
    assert m["at_0.6"]["recall"] == m["recall"] and m["ms_extract_per_session"] > 0
    # The intervals hold their point estimates (two sessions: wide, but not empty).
    for key in ("precision", "recall"):
        lo, hi = m["rules"][f"{key}_ci95"]
        assert 0.0 <= lo <= m["rules"][key] <= hi <= 1.0
    assert res.tables[0][2][0][0] == "rules"


def test_bench_extract_bad_data(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        run_bench("extract", BenchOptions(data=tmp_path, quick=True))
    (tmp_path / "locomo10.json").write_text('{"not": "a list"}')
    with pytest.raises(InputError, match="not a LoCoMo file"):
        run_bench("extract", BenchOptions(data=tmp_path, quick=True))
