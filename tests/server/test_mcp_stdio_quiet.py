"""`egomem mcp` over stdio as a client spawns it: nothing but warnings on stderr by default, and
an empty question answered with a one-line tool error (not a validation dump)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def _rpc(proc: subprocess.Popen[str], msg: dict[str, Any]) -> dict[str, Any] | None:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(msg) + "\n")
    proc.stdin.flush()
    if "id" not in msg:
        return None
    while True:
        line = proc.stdout.readline()
        assert line, "egomem mcp closed its stdout"
        reply: dict[str, Any] = json.loads(line)
        if reply.get("id") == msg["id"]:
            return reply


def test_stdio_is_quiet_and_empty_question_is_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "EGOMEM_LLM__PROVIDER": "rules", "HF_HUB_OFFLINE": "1"}
    env.pop("EGOMEM_API_KEY", None)
    egomem = Path(sys.executable).parent / "egomem"
    errlog = tmp_path / "stderr.txt"
    with errlog.open("w") as errf:
        proc = subprocess.Popen(
            [str(egomem), "--data-dir", str(tmp_path), "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errf,
            text=True,
            env=env,
        )
    try:
        init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
        assert _rpc(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}) is not None
        _rpc(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        replies = [
            _rpc(
                proc,
                {
                    "jsonrpc": "2.0",
                    "id": i,
                    "method": "tools/call",
                    "params": {"name": "ask", "arguments": {"question": q}},
                },
            )
            for i, q in ((2, ""), (3, "   "))
        ]
        _rpc(proc, {"jsonrpc": "2.0", "id": 4, "method": "tools/list"})
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(60)
    err = errlog.read_text()
    for reply in replies:
        assert reply is not None
        result = reply["result"]
        text = result["content"][0]["text"]
        assert result["isError"] and text.endswith("the question is empty") and "\n" not in text
        assert "validation error" not in text
    # By default nothing below a warning reaches stderr (the client's log pane).
    noisy = [ln for ln in err.splitlines() if "DEBUG" in ln or "INFO" in ln or "Processing request" in ln]
    assert not noisy, err
