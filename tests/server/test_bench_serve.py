"""`egomem bench serve` end to end (a real server process and real-time devices: slow)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from egomem.bench import BenchOptions, run_bench
from egomem.errors import InputError

PG_DSN = os.environ.get("EGOMEM_TEST_PG_DSN", "")


@pytest.mark.slow
def test_bench_serve_quick(tmp_path: Path) -> None:
    out = tmp_path / "serve.json"
    result = run_bench("serve", BenchOptions(json_path=out, quick=True))
    m = json.loads(out.read_text())["metrics"]
    assert m == result.metrics and set(m["by_devices"]) <= {"1", "2"}
    one = m["by_devices"]["1"]
    assert one["sessions_completed"] == 1 and one["event_lag_s_p50"] > 0


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"workers": "2"}, "only on PostgreSQL"),
        ({"store": "mysql"}, "sqlite or postgres"),
        ({"store": "postgres"}, "needs --set dsn="),
        ({"store": "postgres", "workers": "1", "dsn": "postgresql://x@127.0.0.1:1/x"}, "workers=2 or more"),
    ],
)
def test_bench_serve_refuses_a_fleet_it_cannot_run(
    extra: dict[str, str], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EGOMEM_TEST_PG_DSN", raising=False)
    with pytest.raises(InputError, match=message):
        run_bench("serve", BenchOptions(extra=extra))


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.skipif(not PG_DSN, reason="EGOMEM_TEST_PG_DSN is not set")
def test_bench_serve_fleet_quick(tmp_path: Path) -> None:
    """Two workers on one schema: a person enrolled through one is identified through the other."""
    out = tmp_path / "serve_fleet.json"
    extra = {"workers": "2", "store": "postgres", "llm": "rules", "max_devices": "1", "dsn": PG_DSN}
    run_bench("serve", BenchOptions(json_path=out, quick=True, extra=extra))
    m = json.loads(out.read_text())["metrics"]
    cross = m["cross_worker"]
    assert cross["enrolled_on_a"] and cross["b_recognises"], cross
    assert m["by_devices"]["1"]["sessions_completed"] == 1
