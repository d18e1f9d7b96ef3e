"""`egomem bench serve`: N simulated devices stream to one `egomem serve` on loopback.

The server runs in its own process (as deployed); each device streams the demo's day-2
recording (camera + microphone) at real-time pace in its own thread, through the
reference client. For N = 1, 2, ... we measure the event lag — wall time since the
device started streaming minus the stream time the event is about, for `heard` and
`memchunk` events; part of it is inherent: a turn is heard only after 0.8 s of silence,
then transcribed — and the time from END to the server's `done`. The server "falls
behind real time" when its backlog grows: when a session is not finished (final memory
round included) within `max_backlog_s` (default 10 s) of the device's END.
Bounded: at most `max_devices` (default 4) devices, one recording each.
`--set llm=rules` (any registered LLM provider) starts the server with that provider for
memory extraction instead of the default (the local GGUF model); recorded as `llm_provider`.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

import numpy as np

from egomem.bench import BenchOptions, BenchResult, register
from egomem.config import load_config
from egomem.errors import EgomemError
from egomem.runtime.demo import ASSETS
from egomem.server.client import stream_recording
from egomem.server.tenants import TenantRegistry
from egomem.stream.sources import read_recording


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_up(port: int, timeout: float = 120.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise EgomemError(f"egomem serve did not start on port {port}")


def _device(url: str, key: str, rec: Any, out: dict[str, Any]) -> None:
    t0 = time.perf_counter()
    lags: list[float] = []

    def on_event(ev: dict[str, Any]) -> None:
        if ev["type"] in ("heard", "memchunk") and "time" in ev:
            lags.append(time.perf_counter() - t0 - float(ev["time"]))
        if ev["type"] == "done":
            out["done_after_end_s"] = time.perf_counter() - t0 - rec.duration_s

    stream_recording(url, key, rec, realtime=True, on_event=on_event)
    out["lags"] = lags


@register("serve")
def run(options: BenchOptions) -> BenchResult:
    max_devices = int(options.extra.get("max_devices", 2 if options.quick else 4))
    max_backlog = float(options.extra.get("max_backlog_s", 10.0))
    rec = read_recording(ASSETS / "day2.mp4")
    rows: list[list[Any]] = []
    metrics: dict[str, Any] = {"recording_s": round(rec.duration_s, 1), "by_devices": {}}
    behind_at: int | None = None
    llm = options.extra.get("llm")
    overrides = {"EGOMEM_LLM__PROVIDER": llm} if llm else {}
    with tempfile.TemporaryDirectory() as tmp:
        cfg = load_config(data_dir=tmp, environ=overrides)
        metrics["llm_provider"] = cfg.llm.provider
        reg = TenantRegistry(cfg)
        _, key = reg.create("bench")
        reg.close()
        port = _free_port()
        env = {**os.environ, "HF_HUB_OFFLINE": "1", **overrides}
        server = subprocess.Popen(
            [sys.executable, "-m", "egomem.cli.main", "--data-dir", tmp, "serve", "--port", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        try:
            _wait_up(port)
            url = f"ws://127.0.0.1:{port}"
            stream_recording(url, key, rec, realtime=False)  # warm-up: the server loads its models
            for n in range(1, max_devices + 1):
                outs: list[dict[str, Any]] = [{} for _ in range(n)]
                threads = [threading.Thread(target=_device, args=(url, key, rec, o)) for o in outs]
                for th in threads:
                    th.start()
                for th in threads:
                    th.join(timeout=rec.duration_s * 10 + 120)
                lags = np.asarray([x for o in outs for x in o.get("lags", [])] or [np.nan])
                done = [o["done_after_end_s"] for o in outs if "done_after_end_s" in o]
                p50, p95 = float(np.nanpercentile(lags, 50)), float(np.nanpercentile(lags, 95))
                ok = len(done) == n and max(done) <= max_backlog
                metrics["by_devices"][str(n)] = {
                    "event_lag_s_p50": p50,
                    "event_lag_s_p95": p95,
                    "done_after_end_s_max": max(done) if done else None,
                    "sessions_completed": len(done),
                    "keeps_up": ok,
                }
                rows.append([n, p50, p95, max(done) if done else "-", f"{len(done)}/{n}", "yes" if ok else "no"])
                if not ok:
                    behind_at = n
                    break
        finally:
            server.terminate()
            server.wait(30)
    metrics["falls_behind_at_devices"] = behind_at
    metrics["load_avg_1min"] = os.getloadavg()[0]
    table = (
        f"bench serve: devices streaming {rec.duration_s:.0f} s of camera + microphone at real-time pace",
        ["devices", "lag p50 s", "lag p95 s", "END->done s", "completed", f"keeps up (done <= {max_backlog:g} s)"],
        rows,
    )
    notes = [
        "lag = wall time since the device started minus the stream time of the event (heard / memchunk)",
        f"server in its own process on 127.0.0.1; falls behind at {behind_at or f'> {max_devices}'} device(s)",
    ]
    return BenchResult("serve", metrics, [table], notes)
