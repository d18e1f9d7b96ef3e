"""BENCHMARKS.md is exactly what scripts/benchmarks_md.py renders from benchmarks/results/*.json."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from egomem.bench import BenchOptions, read_metrics, run_bench
from egomem_eval.record import ENVELOPE_KEYS, cpu_info

ROOT = Path(__file__).resolve().parents[2]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("benchmarks_md", ROOT / "scripts" / "benchmarks_md.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def test_benchmarks_md_matches_the_committed_results() -> None:
    md = _script()
    expected = md.render(md.load_results())
    assert (ROOT / "BENCHMARKS.md").read_text() == expected, "BENCHMARKS.md is stale: run `make benchmarks-md`"


def test_every_result_file_has_an_envelope() -> None:
    for f in sorted((ROOT / "benchmarks" / "results").glob("*.json")):
        rec = json.loads(f.read_text())
        assert set(ENVELOPE_KEYS) <= set(rec), f
        # One file per run of a bench: NAME.json, or NAME_VARIANT.json for a second setting.
        assert f.stem == rec["benchmark"] or f.stem.startswith(rec["benchmark"] + "_"), f
        assert rec["command"].startswith(f"egomem bench {rec['benchmark']} "), f
        assert isinstance(rec["metrics"], dict) and rec["metrics"], f


def test_json_envelope_and_rendering(tmp_path: Path) -> None:
    out = tmp_path / "results" / "smoke.json"
    run_bench("smoke", BenchOptions(json_path=out, quick=True))
    rec = json.loads(out.read_text())
    assert rec["benchmark"] == "smoke" and rec["command"] == f"egomem bench smoke --quick --json {out}"
    assert rec["cpu_count"] >= 1 and rec["wall_s"] > 0 and len(rec["date_utc"]) == 20
    assert rec["git"]["commit"] is None or len(rec["git"]["commit"]) == 40
    assert read_metrics(out) == rec["metrics"] and rec["metrics"]["users"] == 50
    assert rec["cpu"] == cpu_info() and rec["cpu"]["model"]
    md = _script()
    text = md.render(md.load_results(out.parent))
    assert "## `egomem bench smoke`" in text and "`users` | 50" in text
    assert f"CPUs ({rec['cpu']['model']}; " in text  # the CPU is named beside the load
    # No result file for locomo here: its summary figures are marked, not invented.
    locomo_row = next(line for line in text.splitlines() if "LoCoMo evidence R@10, product" in line)
    assert md.MISSING in locomo_row


def test_a_file_without_envelope_is_refused(tmp_path: Path) -> None:
    (tmp_path / "old.json").write_text('{"pass_at_1": 0.9}')
    with pytest.raises(SystemExit, match="no envelope"):
        _script().load_results(tmp_path)


def test_the_cpu_is_read_from_cpuinfo() -> None:
    x86 = "processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse2 avx2 avx512f avx512_vnni\n\nprocessor\t: 1\n"
    assert cpu_info(x86) == {"model": "AMD EPYC", "isa": ["avx2", "avx512f", "avx512_vnni"]}
    arm = "processor\t: 0\nFeatures\t: fp asimd evtstrm\nCPU part\t: 0xd0c\n"
    assert cpu_info(arm)["isa"] == ["asimd"]  # type: ignore[index]
    assert cpu_info("")["isa"] == []  # type: ignore[index]  # no flags line: nothing claimed


def test_a_doc_quoting_an_older_run_of_a_result_file_is_flagged(tmp_path: Path) -> None:
    md = _script()
    (tmp_path / "docs" / "benchmarks").mkdir(parents=True)
    (tmp_path / "README.md").write_text("Figures: BENCHMARKS.md (`benchmarks/results/asr.json`).\n")
    (tmp_path / "docs" / "benchmarks" / "asr.md").write_text(
        "`benchmarks/results/asr.json`, the command above,\n"
        "commit 1234abc (clean): WER 0.2.\n"
        "The committed run, `benchmarks/results/asr.json` at commit abcdef0123, gives WER 0.1.\n"
        "An earlier run (commit 1234abc, no longer the committed result) gave WER 0.2.\n"
    )
    results = {"asr": {"git": {"commit": "abcdef0123456789"}}}
    assert md.old_quotes(results, tmp_path) == [
        "docs/benchmarks/asr.md:1: quotes asr.json at 1234abc; the committed run is abcdef0123"
    ]
