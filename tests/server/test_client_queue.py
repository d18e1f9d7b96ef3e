"""The reference client's `queue_status` against a stand-in for the service's queue endpoint
(plumbing only: the endpoint itself is tested in test_memory_queue_api.py, end to end in
test_bench_serve.py)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from egomem.errors import InputError
from egomem.server.client import queue_status


@pytest.fixture
def stand_in() -> Iterator[tuple[str, list[str]]]:
    """Answers key "good" with a queue body, "bad" with 401, "junk" with text that is not JSON;
    keeps the Authorization headers and paths it was sent."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            auth = self.headers.get("Authorization", "")
            seen.append(f"{self.path} {auth}")
            if auth == "Bearer bad":
                self.send_error(401, "Unauthorized")
                return
            body = b"<html>" if auth == "Bearer junk" else json.dumps({"backlog": 3, "failed": 1}).encode()
            self.send_response(200)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"127.0.0.1:{server.server_port}", seen
    finally:
        server.shutdown()


def test_queue_status_reads_the_tenants_queue_with_its_key(stand_in: tuple[str, list[str]]) -> None:
    addr, seen = stand_in
    assert queue_status(f"ws://{addr}/", "good") == {"backlog": 3, "failed": 1}
    assert queue_status(f"http://{addr}", "good")["backlog"] == 3
    assert seen == ["/api/v1/memory/queue Bearer good"] * 2


@pytest.mark.parametrize(("key", "says"), [("bad", "HTTP 401"), ("junk", "other than JSON")])
def test_queue_status_refusals_are_one_line_errors(stand_in: tuple[str, list[str]], key: str, says: str) -> None:
    addr, _ = stand_in
    with pytest.raises(InputError, match=says):
        queue_status(f"ws://{addr}", key)


def test_queue_status_of_a_service_that_is_not_there_is_a_one_line_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed when the block ends: nothing listens there
    with pytest.raises(InputError, match="cannot reach"):
        queue_status(f"ws://127.0.0.1:{port}", "good", timeout_s=5)
