"""The envelope every `--json` result carries, so a figure can be traced to its run.

A result file is `{"benchmark", "command", "git", "date_utc", "load_start", "load_end",
"cpu_count", "python", "platform", "wall_s", "metrics"}`: the command that reproduces
it, the commit it ran on (and whether the tree had uncommitted changes), when, on what,
and how loaded the machine was at both ends (timings on a shared machine mean little
without it). BENCHMARKS.md is rendered from these files (scripts/benchmarks_md.py).
"""

from __future__ import annotations

import os
import platform
import shlex
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ENVELOPE_KEYS = (
    "benchmark",
    "command",
    "git",
    "date_utc",
    "load_start",
    "load_end",
    "cpu_count",
    "python",
    "platform",
    "wall_s",
)


def loadavg() -> list[float] | None:
    """The 1, 5 and 15-minute load averages (None where /proc/loadavg does not exist)."""
    try:
        fields = Path("/proc/loadavg").read_text().split()
    except OSError:
        return None
    return [float(x) for x in fields[:3]]


def git_state(where: Path | None = None) -> dict[str, Any]:
    """Commit and dirtiness of the checkout holding the running code ({"commit": None}
    when it is not a git checkout, e.g. an installed wheel)."""
    cwd = where or Path(__file__).resolve().parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()
        status = subprocess.run(
            ["git", "status", "--porcelain"], cwd=cwd, capture_output=True, text=True, check=True, timeout=30
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}
    return {"commit": commit, "dirty": bool(status.strip())}


def command_line(name: str, data: Path | None, quick: bool, extra: dict[str, str], json_path: Path | None) -> str:
    """The `egomem bench` command that reproduces a run with these options."""
    argv = ["egomem", "bench", name]
    if data is not None:
        argv += ["--data", str(data)]
    if quick:
        argv.append("--quick")
    for k, v in extra.items():
        argv += ["--set", f"{k}={v}"]
    if json_path is not None:
        argv += ["--json", str(json_path)]
    return shlex.join(argv)


def envelope(name: str, command: str, load_start: list[float] | None, wall_s: float) -> dict[str, Any]:
    return {
        "benchmark": name,
        "command": command,
        "git": git_state(),
        "date_utc": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "load_start": load_start,
        "load_end": loadavg(),
        "cpu_count": os.cpu_count(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "wall_s": round(wall_s, 3),
    }
