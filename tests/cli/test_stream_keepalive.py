"""A stream faster than real time is not dropped by keepalive pings (found running
docs/quickstart.md's `egomem client --fast` under load: "ended the stream without finishing the
session", close code 1006 from the client's pings, then 1011 "keepalive ping timeout" from the
server's, whose pong waited behind the frames the session reads at its own pace). `egomem serve`
pings but never drops a connection for a late pong (its idle timeout closes a silent device);
`egomem client` sends no pings (its wait for `done` has its own deadline)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from egomem.errors import InputError
from egomem.server import client
from egomem.server.serve import serve
from egomem.stream.sources import Recording


def test_client_connects_without_keepalive_pings(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    def connect(uri: str, **kwargs: Any) -> None:  # a mock of websockets' connect, for the plumbing only
        seen.update(kwargs, uri=uri)
        raise OSError("refused")

    monkeypatch.setattr("websockets.sync.client.connect", connect)
    rec = Recording(listen=np.zeros(1600, np.float32), speak=np.zeros(0, np.float32), frames=[], duration_s=0.1)
    with pytest.raises(InputError, match="cannot connect"):
        client.stream_recording("ws://127.0.0.1:9", "egm_x", rec)
    assert seen["ping_interval"] is None and seen["uri"] == "ws://127.0.0.1:9/api/v1/stream?dialog=server&pace=live"
    assert "egm_x" not in seen["uri"] and seen["additional_headers"] == {"Authorization": "Bearer egm_x"}


def test_serve_pings_but_never_drops_for_a_late_pong(monkeypatch: pytest.MonkeyPatch) -> None:
    configs: list[Any] = []

    class Server:  # a mock of uvicorn.Server, for the plumbing only: records the config, serves nothing
        def __init__(self, config: Any) -> None:
            configs.append(config)

        def run(self, sockets: list[Any]) -> None:
            assert sockets and sockets[0].getsockname()[1] > 0

    monkeypatch.setattr("uvicorn.Server", Server)
    serve(lambda: object(), "127.0.0.1", 0)
    assert configs[0].ws_ping_interval == 20.0 and configs[0].ws_ping_timeout is None
