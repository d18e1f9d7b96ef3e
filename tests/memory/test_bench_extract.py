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
    assert 0.0 <= m["recall"] <= 1.0 and 0.0 < m["precision"] <= 1.0
    # The run's own examples: the best match really is above the threshold it reports.
    assert m["at_0.6"]["recall"] == m["recall"] and m["ms_extract_per_session"] > 0
    assert res.tables[0][2][0][0] == "rules"


def test_bench_extract_bad_data(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        run_bench("extract", BenchOptions(data=tmp_path, quick=True))
    (tmp_path / "locomo10.json").write_text('{"not": "a list"}')
    with pytest.raises(InputError, match="not a LoCoMo file"):
        run_bench("extract", BenchOptions(data=tmp_path, quick=True))
