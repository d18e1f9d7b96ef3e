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
    extra["ef_sweep"] = "40"
    out = tmp_path / "store.json"
    result = run_bench("store", BenchOptions(json_path=out, quick=True, extra=extra))
    m = json.loads(out.read_text())["metrics"]
    assert m["sizes"] == [200]
    for b in m["backends"]:
        assert 0 < m[f"{b}_200_search_p50_ms"] <= m[f"{b}_200_search_p95_ms"]
        assert 0 < m[f"{b}_200_read_p50_ms"] <= m[f"{b}_200_read_p95_ms"]
        assert m[f"{b}_200_writes_per_s"] > 0
        assert m[f"{b}_200_recall_at_5"] >= 0.9
        assert 0 < m[f"{b}_200_ident_p50_ms"] <= m[f"{b}_200_ident_p95_ms"]
        assert m[f"{b}_200_ident_top1_agree"] >= 0.9
        # where the cell's wall time went, part by part
        phases = {k.removeprefix(f"{b}_200_phase_"): v for k, v in m.items() if k.startswith(f"{b}_200_phase_")}
        parts = ("open", "keys", "load_and_index", "read_back", "exact", "search_and_identify", "writes", "close")
        assert set(phases) == {f"{p}_s" for p in parts} and all(v >= 0 for v in phases.values())
    assert m["sqlite_200_recall_at_5"] == 1.0  # exact search
    assert ("postgres" in m["backends"]) == (backend == "postgres")
    if backend == "postgres":  # identification again at ef_search 40, on the same keys
        assert m["postgres_200_ef40_ident_p50_ms"] > 0 and m["postgres_200_ef40_ident_top1_agree"] >= 0.9
    assert "users/keys" in render(result)


def test_bench_store_keys_from_real_faces(tmp_path: Path) -> None:
    """keys=faces: keys built from the real descriptors of the test photos (two people), jittered."""
    data = Path(__file__).resolve().parents[1] / "data" / "faces"
    extra = {"sizes": "300", "queries": "10", "writes": "5", "dsn": "", "keys": "faces"}
    run_bench("store", BenchOptions(json_path=tmp_path / "s.json", quick=True, data=data, extra=extra))
    m = json.loads((tmp_path / "s.json").read_text())["metrics"]
    assert m["keys"] == "faces" and m["real_people"] == 2 and m["real_descriptors"] == 4
    assert m["sqlite_300_top1_agree"] == 1.0 == m["sqlite_300_ident_top1_agree"]  # exact on SQLite


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"sizes": "a,b"}, "integers"),
        ({"sizes": "5"}, "at least"),
        ({"queries": "0"}, "positive"),
        ({"keys": "uniform"}, "gaussian or faces"),
        ({"ef_sweep": "40,x"}, "integers"),
    ],
)
def test_bench_store_bad_options(extra: dict[str, str], message: str) -> None:
    with pytest.raises(InputError, match=message):
        run_bench("store", BenchOptions(quick=True, extra={"dsn": "", **extra}))


@pytest.mark.postgres
@pytest.mark.skipif(not PG_DSN, reason="EGOMEM_TEST_PG_DSN is not set")
def test_bench_store_keeps_a_schema_and_measures_it_again(tmp_path: Path) -> None:
    """keep=1 then schema=NAME: the second run loads nothing and finds the same keys; ef_search is chosen on
    dev queries and reported with the test queries' figures."""
    from egomem.store.postgres import PostgresStore

    extra = {"sizes": "300", "queries": "20", "writes": "3", "dsn": PG_DSN, "backends": "postgres", "ef_sweep": "40"}
    run_bench("store", BenchOptions(json_path=tmp_path / "a.json", quick=True, extra={**extra, "keep": "1"}))
    first = json.loads((tmp_path / "a.json").read_text())["metrics"]
    schema = first["postgres_300_schema"]
    try:
        assert first["postgres_300_ef_chosen"] in (40, first["pg_ef_search"])
        assert first["postgres_300_chosen_ident_top1_agree"] >= 0.9
        again = BenchOptions(json_path=tmp_path / "b.json", quick=True, extra={**extra, "schema": schema})
        run_bench("store", again)
        second = json.loads((tmp_path / "b.json").read_text())["metrics"]
        assert "postgres_300_load_s" not in second and "postgres_300_index_s" not in second  # nothing loaded
        assert "postgres_300_phase_load_and_index_s" not in second and "postgres_300_phase_exact_s" in second
        assert second["postgres_300_ident_top1_agree"] >= 0.9
        with pytest.raises(InputError, match="does not hold"):  # another size's keys are not in it
            run_bench("store", BenchOptions(quick=True, extra={**extra, "sizes": "299", "schema": schema}))
    finally:
        PostgresStore(PG_DSN, schema=schema).drop_schema()


def test_bench_store_schema_needs_one_postgres_size() -> None:
    with pytest.raises(InputError, match="one size and backends=postgres"):
        run_bench("store", BenchOptions(quick=True, extra={"dsn": "", "sizes": "100,200", "schema": "bench_x"}))
