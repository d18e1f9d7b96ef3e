"""In CI the evaluation data must be there: its absence fails the run instead of skipping."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _collect(env_update: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **env_update}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/bench/test_visits.py",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_missing_data_fails_in_ci_and_skips_locally(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-data-here")
    r = _collect({"CI": "true", "EGOMEM_BENCH_DATA": missing}, tmp_path)
    assert r.returncode != 0 and "evaluation data folder" in r.stdout + r.stderr
    r = _collect({"CI": "", "EGOMEM_BENCH_DATA": missing}, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
