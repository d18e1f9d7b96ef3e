"""`egomem bench serve` end to end (a real server process and real-time devices: slow)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from egomem.bench import BenchOptions, run_bench
from egomem.bench._servers import Worker, drain_queue
from egomem.errors import InputError

from .conftest import stand_in_endpoint

PG_DSN = os.environ.get("EGOMEM_TEST_PG_DSN", "")


@pytest.mark.slow
def test_bench_serve_quick(tmp_path: Path) -> None:
    out = tmp_path / "serve.json"
    result = run_bench("serve", BenchOptions(json_path=out, quick=True))
    m = json.loads(out.read_text())["metrics"]
    assert m == result.metrics and set(m["by_devices"]) <= {"1", "2"}
    one = m["by_devices"]["1"]
    assert one["sessions_completed"] == 1 and one["event_lag_s_p50"] > 0
    # the queue was read from the server and emptied before the next round; the server's RSS was read
    assert one["drained"] and one["memory_backlog_after_drain"] == 0 and one["memory_jobs_failed"] == 0
    assert one["memory_lag_s_p95"] is not None and one["memory_lag_s_p95"] >= one["memory_lag_s_p50"] > 0
    assert m["server_peak_rss_mb"] > 200


def _queue_body(backlog: int) -> dict[str, object]:
    lag = None if backlog else 4.0
    return {
        "backlog": backlog,
        "refine_backlog": backlog,
        "failed": 0,
        "fallbacks": 0,
        "lag_p50_s": lag,
        "lag_p95_s": lag,
        "refine_lag_p50_s": lag,
        "refine_lag_p95_s": lag,
    }


@pytest.fixture
def queue_server() -> Iterator[tuple[str, list[str]]]:
    """A stand-in for the service's queue endpoint (plumbing only): backlog 2, then 1, then 0 for good;
    it keeps the Authorization headers it was sent."""
    backlogs, auth = [2, 1], []

    def answer(path: str, header: str) -> tuple[int, bytes]:
        assert path == "/api/v1/memory/queue"
        auth.append(header)
        return 200, json.dumps(_queue_body(backlogs.pop(0) if backlogs else 0)).encode()

    with stand_in_endpoint(answer) as port:
        yield f"ws://127.0.0.1:{port}", auth


def test_drain_queue_reads_the_backlog_at_the_end_and_waits_until_it_is_empty(
    queue_server: tuple[str, list[str]],
) -> None:
    url, auth = queue_server
    q = drain_queue(url, "k-1", timeout_s=30)
    assert q["memory_backlog_end_of_stream"] == 2 and q["refine_backlog_end_of_stream"] == 2
    assert q["drained"] and q["memory_backlog_after_drain"] == 0 and q["memory_lag_s_p95"] == 4.0
    assert 0.9 <= q["drain_s"] < 30 and auth == ["Bearer k-1"] * 3


def test_drain_queue_gives_up_after_its_timeout_and_says_so(queue_server: tuple[str, list[str]]) -> None:
    url, _ = queue_server
    q = drain_queue(url, "k", timeout_s=0.2)
    assert not q["drained"] and q["memory_backlog_after_drain"] == 1


def test_worker_peak_rss_is_the_child_process_high_water_mark(tmp_path: Path) -> None:
    code = "x = bytearray(150 * 2**20); x[::4096] = b'1' * len(x[::4096]); del x; import time; time.sleep(30)"
    proc = subprocess.Popen([sys.executable, "-c", code])
    worker = Worker(0, proc, tmp_path / "log")
    try:
        deadline = time.time() + 20
        while (worker.peak_rss_mb() or 0) < 150 and time.time() < deadline:
            time.sleep(0.1)
        assert 150 <= (worker.peak_rss_mb() or 0) < 400  # the 150 MB it touched and freed, kept as the peak
    finally:
        proc.kill()
        proc.wait()
    assert worker.peak_rss_mb() is None  # a process that is gone has no /proc entry


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
