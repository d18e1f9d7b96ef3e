"""A service that cannot start says why in one line and exits non-zero, before loading any model."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize("command", [["serve"], ["mcp", "--transport", "http"]])
def test_busy_port_is_one_line(tmp_path: Path, command: list[str]) -> None:
    egomem = Path(sys.executable).parent / "egomem"
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        r = subprocess.run(
            [str(egomem), "--data-dir", str(tmp_path), *command, "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
        )
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("egomem: error: cannot listen on 127.0.0.1:") and "in use" in lines[0]
