"""`egomem bench serve` end to end (a real server process and real-time devices: slow)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from egomem.bench import BenchOptions, run_bench


@pytest.mark.slow
def test_bench_serve_quick(tmp_path: Path) -> None:
    out = tmp_path / "serve.json"
    result = run_bench("serve", BenchOptions(json_path=out, quick=True))
    m = json.loads(out.read_text())["metrics"]
    assert m == result.metrics and set(m["by_devices"]) <= {"1", "2"}
    one = m["by_devices"]["1"]
    assert one["sessions_completed"] == 1 and one["event_lag_s_p50"] > 0
