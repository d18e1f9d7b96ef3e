"""A real OpenAI-compatible chat server on 127.0.0.1 that replays scripted responses.

It tests the protocol (request shape, retries, timeouts, malformed answers, token
accounting), not model quality: the answers are recorded, not generated.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Scripted:
    status: int = 200
    content: str | None = None  # the assistant message content (JSON text, or junk)
    raw: str | None = None  # a raw body instead of a chat completion
    delay_s: float = 0.0
    ignore_stop: bool = False  # a server that does not honour `stop` (some don't)
    finish_reason: str = "stop"  # "length": the server ran out of tokens for the answer
    usage: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 100, "completion_tokens": 20})


class ChatServer:
    Scripted = Scripted  # tests build their script from this (importlib mode: no conftest import)

    def __init__(self) -> None:
        self.script: list[Scripted] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                request = json.loads(body)
                server.requests.append(request)
                server.headers.append(dict(self.headers))
                step = server.script.pop(0) if server.script else Scripted(status=500, raw="script exhausted")
                if step.delay_s:
                    time.sleep(step.delay_s)
                if step.raw is not None:
                    payload = step.raw.encode()
                else:
                    content = _apply_stop(step.content, None if step.ignore_stop else request.get("stop"))
                    reply = {
                        "id": "chatcmpl-test",
                        "object": "chat.completion",
                        "model": "recorded",
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": content},
                                "finish_reason": step.finish_reason,
                            }
                        ],
                        "usage": step.usage,
                    }
                    payload = json.dumps(reply).encode()
                try:
                    self.send_response(step.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _apply_stop(content: str | None, stop: str | list[str] | None) -> str | None:
    """Like a real server: the reply ends before the first stop sequence, which is left out."""
    if content is None or not stop:
        return content
    cuts = [i for s in ([stop] if isinstance(stop, str) else stop) if (i := content.find(s)) >= 0]
    return content[: min(cuts)] if cuts else content


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    s = ChatServer()
    yield s
    s.close()


@pytest.fixture
def free_port_url() -> str:
    """A loopback URL where nothing listens (the endpoint is down)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture(scope="module")
def packaged_model() -> None:
    """Skips where the packaged 1.5B model is not assembled (tests that run the real model)."""
    from egomem import weights
    from egomem.config import default_data_dir

    if weights.ready_path("qwen2.5-coder-1.5b", default_data_dir()) is None:
        pytest.skip("qwen2.5-coder-1.5b is not assembled here (egomem models install qwen2.5-coder-1.5b)")
