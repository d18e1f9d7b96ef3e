"""Reference client: streams a recording to `egomem serve` like a robot would, prints events.

    egomem client day1.mp4 --url ws://127.0.0.1:8765 --key egm_...

Audio goes in 80 ms LISTEN frames, video as JPEG at the recording's sampled frame rate,
at wall-clock pace (or as fast as the server takes it with --fast). `queue_status` reads the
tenant's memory-writing queue (backlog, lag, failures), as an operator's script or a fleet's
monitor would.
"""

from __future__ import annotations

import io
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import numpy as np
from PIL import Image

from egomem.errors import InputError
from egomem.server.protocol import Kind, encode, float_to_pcm16
from egomem.stream.sources import Recording, replay


def jpeg(image: np.ndarray, quality: int = 85) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(image).save(buf, format="JPEG", quality=quality)
    return buf.getvalue()


def stream_recording(
    url: str,
    key: str,
    rec: Recording,
    *,
    realtime: bool = True,
    on_event: Callable[[dict[str, Any]], None] | None = None,
    dialog: str = "server",
    pace: str | None = None,
) -> list[dict[str, Any]]:
    """Send the whole recording, then END; returns every event the server sent. `pace`: how the
    server takes the stream (server/session.py); None: `live` at wall-clock pace, else `replay`."""
    from websockets.exceptions import ConnectionClosed, InvalidStatus
    from websockets.sync.client import connect

    events: list[dict[str, Any]] = []
    sep = "&" if "?" in url else "?"
    # A recording sent as fast as the server takes it is a replay (each poll and memory round waited
    # for: repeatable); at wall-clock pace it is live, as a robot's stream.
    pace = pace or ("live" if realtime else "replay")
    target = f"{url.rstrip('/')}/api/v1/stream{sep}dialog={dialog}&pace={pace}"
    try:
        # No keepalive pings from this side: the server answers a ping from its event loop, which a
        # loaded machine can hold past the 20 s default while the session is processed, and the
        # client would then drop a healthy stream (close code 1006). The wait for `done` below has
        # its own deadline, and a server that goes away closes the connection.
        ws = connect(
            target,
            additional_headers={"Authorization": f"Bearer {key}"},
            max_size=2**22,
            open_timeout=30,
            ping_interval=None,
        )
    except (OSError, InvalidStatus) as exc:
        raise InputError(f"cannot connect to {url}: {exc}") from exc

    def receive() -> None:
        try:
            for msg in ws:
                ev = json.loads(msg)
                events.append(ev)
                if on_event:
                    on_event(ev)
        except ConnectionClosed:
            pass

    reader = threading.Thread(target=receive, daemon=True)
    reader.start()
    with ws:
        for step in replay(rec, realtime=realtime):
            for fr in step.frames:
                ws.send(encode(Kind.VIDEO, jpeg(fr.image)))
            ws.send(encode(Kind.LISTEN, float_to_pcm16(step.listen)))
            if rec.speak.size:
                ws.send(encode(Kind.SPEAK, float_to_pcm16(step.speak)))
        ws.send(encode(Kind.END))
        deadline = time.time() + 600
        # Until `done`, or until the connection is gone (nothing more can come: don't wait 600 s for it).
        while time.time() < deadline and reader.is_alive() and not any(e.get("type") == "done" for e in events):
            time.sleep(0.05)
    reader.join(timeout=5)
    if not any(e.get("type") == "done" for e in events):
        why = f"close code {ws.close_code}, reason {ws.close_reason!r}" if ws.close_code else "no answer in 600 s"
        raise InputError(f"{url} ended the stream without finishing the session ({why})")
    return events


def queue_status(url: str, key: str, *, timeout_s: float = 30.0) -> dict[str, Any]:
    """The tenant's memory-writing queue as the service reports it (`GET /api/v1/memory/queue`):
    backlog, failures, answers by the rules, and lag (session end -> memory committed). `url` is
    the service's address, ws:// or http://."""
    base = url.rstrip("/").replace("ws://", "http://", 1).replace("wss://", "https://", 1)
    req = urllib.request.Request(f"{base}/api/v1/memory/queue", headers={"Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as resp:
            body = json.loads(resp.read())
    except urllib.error.HTTPError as exc:  # before URLError: it is one
        raise InputError(f"{base} refused the queue request: HTTP {exc.code} {exc.reason}") from exc
    except (urllib.error.URLError, OSError) as exc:
        raise InputError(f"cannot reach {base}: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise InputError(f"{base} answered the queue request with something other than JSON") from exc
    if not isinstance(body, dict) or "backlog" not in body:
        raise InputError(f"{base} answered the queue request without a backlog: not an egomem service?")
    return dict(body)
