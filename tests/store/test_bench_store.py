"""`egomem bench store --quick` end to end on tiny sizes, on each backend the suite has."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from egomem.bench import BenchOptions, render, run_bench
from egomem.errors import InputError

from .conftest import PG_DSN


def test_bench_store_quick(backend: str, tmp_path: Path) -> None:
    extra = {"sizes": "200", "queries": "10", "writes": "10", "dsn": PG_DSN if backend == "postgres" else ""}
    out = tmp_path / "store.json"
    result = run_bench("store", BenchOptions(json_path=out, quick=True, extra=extra))
    m = json.loads(out.read_text())["metrics"]
    assert m["sizes"] == [200]
    for b in m["backends"]:
        assert 0 < m[f"{b}_200_search_p50_ms"] <= m[f"{b}_200_search_p95_ms"]
        assert 0 < m[f"{b}_200_read_p50_ms"] <= m[f"{b}_200_read_p95_ms"]
        assert m[f"{b}_200_writes_per_s"] > 0
        assert m[f"{b}_200_recall_at_5"] >= 0.9
    assert m["sqlite_200_recall_at_5"] == 1.0  # exact search
    assert ("postgres" in m["backends"]) == (backend == "postgres")
    assert "users/keys" in render(result)


@pytest.mark.parametrize(
    ("extra", "message"),
    [({"sizes": "a,b"}, "integers"), ({"sizes": "5"}, "at least"), ({"queries": "0"}, "positive")],
)
def test_bench_store_bad_options(extra: dict[str, str], message: str) -> None:
    with pytest.raises(InputError, match=message):
        run_bench("store", BenchOptions(quick=True, extra={"dsn": "", **extra}))
