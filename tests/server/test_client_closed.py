"""The reference client when the server drops the session: one clear error at once, not a
600-second wait for a `done` that can no longer come."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest
from websockets.sync.server import Server, ServerConnection, serve

from egomem.errors import InputError
from egomem.server.client import stream_recording
from egomem.server.protocol import Kind
from egomem.stream.sources import Recording


def _hang_up(ws: ServerConnection) -> None:
    """A server that reads the stream and closes at END without finishing the session."""
    for msg in ws:
        if isinstance(msg, bytes) and msg[0] == Kind.END:
            break
    ws.close(1011, "worker lost")


@pytest.fixture
def server() -> Iterator[Server]:
    with serve(_hang_up, "127.0.0.1", 0) as srv:
        th = threading.Thread(target=srv.serve_forever, daemon=True)
        th.start()
        yield srv
        srv.shutdown()


def test_a_session_dropped_before_done_is_one_clear_error(server: Server) -> None:
    port = server.socket.getsockname()[1]
    rec = Recording(np.zeros(16000, np.float32), np.zeros(0, np.float32), [], 1.0)
    t0 = time.monotonic()
    with pytest.raises(InputError, match="without finishing the session") as err:
        stream_recording(f"ws://127.0.0.1:{port}", "egm_test", rec, realtime=False)
    assert time.monotonic() - t0 < 30 and len(str(err.value).splitlines()) == 1
