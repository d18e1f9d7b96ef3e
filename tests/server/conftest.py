"""A real uvicorn server on 127.0.0.1 for the browser and WebSocket tests."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

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
