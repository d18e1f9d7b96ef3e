"""Run the service: bind first (a busy port is one line, before any model loads), then serve
with API keys redacted from every log line."""

from __future__ import annotations

import errno
import socket
from collections.abc import Callable
from typing import Any

from egomem.errors import EgomemError
from egomem.server.logs import install_redaction


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port, or an EgomemError naming the cause in one line."""
    try:
        family, kind, proto, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        raise EgomemError(f"cannot listen on {host}:{port}: unknown host ({exc.strerror})") from exc
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        hint = (
            "; another `egomem serve` or program holds it: stop it or choose --port"
            if exc.errno == errno.EADDRINUSE
            else ""
        )
        raise EgomemError(f"cannot listen on {host}:{port}: {exc.strerror}{hint}") from exc
    sock.set_inheritable(True)
    return sock


def serve(make_app: Callable[[], Any], host: str, port: int, log_level: str = "info") -> None:
    """Bind host:port, build the app (`make_app`, which may load models), serve until stopped."""
    import uvicorn

    sock = bind(host, port)
    try:
        app = make_app()
        config = uvicorn_config(app, host, port, log_level)  # configures logging
        install_redaction()
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()


def uvicorn_config(app: Any, host: str, port: int, log_level: str = "info") -> Any:
    """The server's uvicorn settings (`uvicorn.Config`). Pings go out, but a late pong does not drop
    the connection: a device streaming faster than real time (`client --fast`, pace=replay) fills
    its side of the socket, which the session reads at its own pace, so the pong waits behind the
    frames (uvicorn's 20 s default closed such streams, 1011 "keepalive ping timeout"). A device
    that goes silent is closed by the session's idle timeout instead."""
    import uvicorn

    return uvicorn.Config(app, host=host, port=port, log_level=log_level, ws_ping_interval=20.0, ws_ping_timeout=None)
