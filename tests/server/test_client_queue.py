"""The reference client's `queue_status` against a stand-in for the service's queue endpoint
(plumbing only: the endpoint itself is tested in test_memory_queue_api.py, end to end in
test_bench_serve.py)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest

from egomem.errors import InputError
from egomem.server.client import queue_status

from .conftest import stand_in_endpoint


@pytest.fixture
def stand_in() -> Iterator[tuple[str, list[str]]]:
    """Answers key "good" with a queue body, "bad" with 401, "junk" with text that is not JSON;
    keeps the paths and Authorization headers it was sent."""
    seen: list[str] = []

    def answer(path: str, auth: str) -> tuple[int, bytes]:
        seen.append(f"{path} {auth}")
        if auth == "Bearer bad":
            return 401, b"{}"
        return 200, b"<html>" if auth == "Bearer junk" else json.dumps({"backlog": 3, "failed": 1}).encode()

    with stand_in_endpoint(answer) as port:
        yield f"127.0.0.1:{port}", seen


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
