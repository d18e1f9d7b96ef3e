"""`egomem bench memorize` end to end on a one-minute stream with the rules extractor (slow)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from egomem.bench import BenchOptions, run_bench


@pytest.mark.slow
def test_bench_memorize_reports_the_queue_it_left_and_the_lag_bound(tmp_path: Path) -> None:
    out = tmp_path / "memorize.json"
    run_bench("memorize", BenchOptions(json_path=out, quick=True, extra={"llm": "rules", "minutes": "1"}))
    m = json.loads(out.read_text())["metrics"]
    assert m["llm_provider"] == "rules" and m["straight.clips"] >= 2
    assert m["resume_same_memory"], "a resumed run must remember what a straight one does"
    # every clip's memory is written before the next: nothing waits, fails or falls back at the end
    assert m["memory_backlog_end"] == 0 and m["refine_backlog_end"] == 0
    assert m["memory_jobs_failed"] == 0 and m["memory_jobs_fallbacks"] == 0
    assert not [k for k in m if k.startswith("memory_fallbacks.")]  # a reason per job the rules answered
    assert m["memory_jobs_done"] >= m["straight.episodes"] > 0
    assert 0 < m["clip_wall_s_p50"] <= m["clip_wall_s_p95"] <= m["clip_wall_s_max"] < 120
    assert m["peak_rss_mb"] > 500  # perception models loaded: a figure read from the process, not zero
