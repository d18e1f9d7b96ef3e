"""API keys never in URLs or logs: the service is run as `egomem serve` runs it (server/serve.py),
its log captured and grepped for the key after every way a key can reach the server."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from egomem.config import load_config
from egomem.server.logs import RedactKeys, redact
from egomem.server.tenants import TenantRegistry

SERVE = """
import sys
from egomem.config import load_config
from egomem.server.app import create_app
from egomem.server.serve import serve
cfg = load_config(data_dir=sys.argv[1], environ={})
serve(lambda: create_app(cfg), "127.0.0.1", int(sys.argv[2]))
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str, Path]]:
    reg = TenantRegistry(load_config(data_dir=tmp_path, environ={}))
    _, key = reg.create("home")
    reg.close()
    port, log = _free_port(), tmp_path / "serve.log"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "HF_HUB_OFFLINE": "1"}
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", SERVE, str(tmp_path), str(port)], stdout=out, stderr=subprocess.STDOUT, env=env
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if httpx.get(url + "/health").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        yield url, key, log
    finally:
        proc.terminate()
        proc.wait(20)


def test_keys_never_reach_the_log(served: tuple[str, str, Path]) -> None:
    from websockets.exceptions import ConnectionClosed, InvalidStatus
    from websockets.sync.client import connect

    url, key, log = served
    ws_url = url.replace("http://", "ws://")
    assert httpx.get(url + "/api/v1/users", headers={"Authorization": f"Bearer {key}"}).status_code == 200
    # A key in a URL is not accepted (and not logged either).
    assert httpx.get(url + "/api/v1/users", params={"api_key": key}).status_code == 401
    with pytest.raises((ConnectionClosed, InvalidStatus)), connect(f"{ws_url}/api/v1/watch?api_key={key}") as ws:
        ws.recv(timeout=10)
    # The inspector's way: the key in a first message, acknowledged with the tenant.
    with connect(f"{ws_url}/api/v1/watch") as ws:
        ws.send(json.dumps({"type": "auth", "key": key}))
        assert json.loads(ws.recv(timeout=10)) == {"type": "auth", "tenant": "home"}
    # A robot's way: the header.
    with connect(f"{ws_url}/api/v1/watch", additional_headers={"X-API-Key": key}) as ws:
        ws.send("anything")
    # A wrong first message is refused.
    with pytest.raises(ConnectionClosed), connect(f"{ws_url}/api/v1/watch") as ws:
        ws.send(json.dumps({"type": "auth", "key": "egm_wrong"}))
        ws.recv(timeout=10)
    time.sleep(0.5)  # the access log is written after the response
    text = log.read_text()
    assert "GET /api/v1/users" in text and "/api/v1/watch" in text  # the log was captured
    assert key not in text and key[4:] not in text
    assert "api_key=[redacted]" in text


def test_redact_covers_query_bearer_and_bare_keys() -> None:
    line = 'GET /x?dialog=server&api_key=abc123 "Authorization: Bearer s3cr3t.tok" key egm_AbC-dEf_123456'
    out = redact(line)
    assert "abc123" not in out and "s3cr3t.tok" not in out and "egm_AbC" not in out
    assert "dialog=server" in out  # the rest of the line stays


def test_filter_keeps_uvicorn_access_args_shape() -> None:
    import logging

    rec = logging.LogRecord(
        "uvicorn.access",
        20,
        "",
        0,
        '%s - "%s %s HTTP/%s" %d',
        ("1.2.3.4", "GET", "/a?api_key=egm_abcdef", "1.1", 401),
        None,
    )
    RedactKeys().filter(rec)
    assert isinstance(rec.args, tuple) and len(rec.args) == 5
    assert "egm_abcdef" not in rec.getMessage()
