"""A real uvicorn server on 127.0.0.1 for the browser and WebSocket tests."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, HTTPServer

from fastapi import FastAPI

from egomem.server.serve import uvicorn_config


@contextmanager
def live_app(app: FastAPI) -> Iterator[int]:
    """Serve `app` on a free loopback port for the duration of the block; yields the port."""
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    server = uvicorn.Server(uvicorn_config(app, "127.0.0.1", port, "warning"))  # as `egomem serve` runs
    th = threading.Thread(target=server.run, daemon=True)
    th.start()
    deadline = time.time() + 30
    while not server.started and time.time() < deadline:
        time.sleep(0.05)
    try:
        yield port
    finally:
        server.should_exit = True
        th.join(10)


# What a stand-in endpoint answers a GET with: (status, body bytes), from the path and Authorization header.
Answer = Callable[[str, str], tuple[int, bytes]]


@contextmanager
def stand_in_endpoint(answer: Answer) -> Iterator[int]:
    """A plain HTTP server on a free loopback port answering GETs with `answer` (plumbing tests of
    clients only; the real endpoints are tested through the app). Yields the port."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, body = answer(self.path, self.headers.get("Authorization", ""))
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield int(server.server_port)
    finally:
        server.shutdown()
