"""The envelope every `--json` result carries, so a figure can be traced to its run.

A result file is `{"benchmark", "command", "git", "date_utc", "load_start", "load_end",
"cpu_count", "python", "platform", "wall_s", "metrics"}`: the command that reproduces
it, the code it ran on, when, on what, and how loaded the machine was at both ends
(timings on a shared machine mean little without it). BENCHMARKS.md is rendered from
these files (scripts/benchmarks_md.py). Newer files also name the CPU (`cpu`: its model name
and the vector extensions the kernels dispatch on): CTranslate2 and llama.cpp pick their
kernels by CPU, so the same code gives other timings, and other transcripts and extractions,
on an AVX2-only machine than on one with AVX-512.

Newer files also list the modules the run had loaded when it ended (`modules`: those of the
product, evaluation and training packages in `sys.modules`). Code that was never imported
cannot have moved a figure, so BENCHMARKS.md judges such a result stale by those modules'
files (and the data beside them) rather than by everything its bench module could import
(scripts/bench_provenance.py).

`git` is taken *before* the run starts (`taken: "start"`): the commit, whether the tree
had uncommitted changes, and a hash of those changes (`diff_sha256`), so that a dirty
run names exactly which code it measured. A run during which HEAD moved or the tree
changed measured no single version of the code, and its result is refused
(`ProvenanceError`). Benchmark outputs (`benchmarks/results/`, BENCHMARKS.md) are not
code and do not make the tree dirty, so several benchmarks can run on one commit before
their results are committed together.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import platform
import shlex
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from egomem.errors import InputError

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
# What a benchmark writes: never counted as a change to the code it measures.
OUTPUT_PATHS = ("benchmarks/results", "BENCHMARKS.md")


class ProvenanceError(InputError):
    """The code a benchmark ran on cannot be named: a dirty tree without --allow-dirty, or a
    HEAD or tree that changed during the run."""


def loadavg() -> list[float] | None:
    """The 1, 5 and 15-minute load averages (None where /proc/loadavg does not exist)."""
    try:
        fields = Path("/proc/loadavg").read_text().split()
    except OSError:
        return None
    return [float(x) for x in fields[:3]]


def _git(args: list[str], cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True, timeout=60).stdout


@dataclass(frozen=True)
class GitState:
    """Which code is checked out: the commit, and a hash of every uncommitted change to it
    (tracked diffs and untracked files git does not ignore; benchmark outputs left out)."""

    commit: str | None
    dirty: bool | None
    diff_sha256: str | None
    root: Path | None = None

    def as_json(self) -> dict[str, Any]:
        return {"commit": self.commit, "dirty": self.dirty, "diff_sha256": self.diff_sha256, "taken": "start"}


def git_state(where: Path | None = None) -> GitState:
    """The state of the checkout holding the running code (all None when it is not a git
    checkout, e.g. an installed wheel)."""
    cwd = where or Path(__file__).resolve().parent
    try:
        root = Path(_git(["rev-parse", "--show-toplevel"], cwd).strip())
        commit = _git(["rev-parse", "HEAD"], root).strip()
        excludes = [f":(exclude){p}" for p in OUTPUT_PATHS]
        diff = _git(["diff", "HEAD", "--binary", "--", ".", *excludes], root)
        untracked = _git(["ls-files", "--others", "--exclude-standard", "-z", "--", ".", *excludes], root)
    except (OSError, subprocess.SubprocessError):
        return GitState(None, None, None)
    names = sorted(n for n in untracked.split("\0") if n)
    if not diff and not names:
        return GitState(commit, False, None, root)
    h = hashlib.sha256(diff.encode())
    for name in names:
        h.update(b"\0" + name.encode() + b"\0")
        with contextlib.suppress(OSError):  # vanished or unreadable: its name still counts
            h.update((root / name).read_bytes())
    return GitState(commit, True, h.hexdigest(), root)


def writes_into_results(json_path: Path, state: GitState) -> bool:
    """Whether `json_path` is a committed result of this checkout (benchmarks/results/)."""
    if state.root is None:
        return False
    try:
        rel = json_path.resolve().relative_to(state.root.resolve())
    except ValueError:
        return False
    return rel.parts[:2] == ("benchmarks", "results")


def check_start(state: GitState, json_path: Path, allow_dirty: bool) -> None:
    """Refuse, before any work, a committed result from uncommitted code."""
    if state.dirty and not allow_dirty and writes_into_results(json_path, state):
        raise ProvenanceError(
            f"the tree has uncommitted changes: commit them before writing {json_path} "
            "(or pass --allow-dirty, which the result and BENCHMARKS.md then show)"
        )


def check_end(start: GitState, end: GitState) -> None:
    """Refuse a result whose code changed under it while it ran."""
    if start.commit != end.commit:
        raise ProvenanceError(
            f"HEAD moved during the run ({(start.commit or '?')[:10]} -> {(end.commit or '?')[:10]}): "
            "the result measures no single commit and was not written"
        )
    if start.diff_sha256 != end.diff_sha256:
        raise ProvenanceError("the working tree changed during the run: the result was not written")


def command_line(
    name: str, data: Path | None, quick: bool, extra: dict[str, str], json_path: Path | None, allow_dirty: bool = False
) -> str:
    """The `egomem bench` command that reproduces a run with these options."""
    argv = ["egomem", "bench", name]
    if data is not None:
        argv += ["--data", str(data)]
    if quick:
        argv.append("--quick")
    for k, v in extra.items():
        argv += ["--set", f"{k}={v}"]
    if allow_dirty:
        argv.append("--allow-dirty")
    if json_path is not None:
        argv += ["--json", str(json_path)]
    return shlex.join(argv)


# The extensions the int8/Q4 kernels of CTranslate2 and llama.cpp choose between.
_ISA_FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "avx_vnni", "amx_int8", "neon", "asimd")


def cpu_info(cpuinfo: str | None = None) -> dict[str, Any] | None:
    """{"model": the CPU's name, "isa": the listed vector extensions it has}; None where
    /proc/cpuinfo cannot be read."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            return None
    model, flags = "", set[str]()
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        key = key.strip().lower()
        if key in ("model name", "hardware", "cpu model") and not model:
            model = value.strip()
        elif key in ("flags", "features") and not flags:
            flags = set(value.split())
    return {"model": model or platform.processor() or "?", "isa": [f for f in _ISA_FLAGS if f in flags]}


# The packages whose code a benchmark can run in-process (as scripts/bench_provenance.py).
MEASURED_PACKAGES = ("egomem", "egomem_eval", "egomem_training")


def loaded_modules() -> list[str]:
    """The modules of the measured packages this process has imported, sorted."""
    return sorted(m for m in list(sys.modules) if m.split(".", 1)[0] in MEASURED_PACKAGES)


def envelope(name: str, command: str, state: GitState, load_start: list[float] | None, wall_s: float) -> dict[str, Any]:
    return {
        "benchmark": name,
        "command": command,
        "git": state.as_json(),
        "date_utc": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "load_start": load_start,
        "load_end": loadavg(),
        "cpu_count": os.cpu_count(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu": cpu_info(),
        "wall_s": round(wall_s, 3),
        "modules": loaded_modules(),
    }


class Provenance:
    """Provenance of one run: the code's state taken before it starts (refused at once when
    a committed result would come from uncommitted code) and checked again when it ends."""

    def __init__(self, json_path: Path | None, allow_dirty: bool = False) -> None:
        self.start = git_state()
        self.load_start = loadavg()
        if json_path is not None:
            check_start(self.start, json_path, allow_dirty)

    def envelope(self, name: str, command: str, wall_s: float) -> dict[str, Any]:
        """The envelope of a finished run; ProvenanceError when its code changed under it."""
        check_end(self.start, git_state())
        return envelope(name, command, self.start, self.load_start, wall_s)
