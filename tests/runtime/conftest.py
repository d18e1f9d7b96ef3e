"""Fixtures of the runtime tests: the CLI in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

Cli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def egomem() -> Cli:
    """`egomem(*args, data_dir=...)`: the CLI over that data dir, with the rules LLM (no model loads)."""

    def run(*args: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "EGOMEM_LLM__PROVIDER": "rules"}
        return subprocess.run(
            [sys.executable, "-m", "egomem.cli.main", "--data-dir", str(data_dir), *args],
            capture_output=True,
            text=True,
            timeout=1800,
            env=env,
        )

    return run
