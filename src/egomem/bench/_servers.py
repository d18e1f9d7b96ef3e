"""`egomem serve` processes and simulated devices for `bench serve` (one worker or a fleet).

A worker is `python -m egomem.cli.main --data-dir D serve --port P` in its own process, its
log in a file (the fleet mode reads the errors it wrote). A device streams a recording through
the reference client and keeps every event with the wall time it arrived, so lags, the time
of an identification and events after a database restart can all be read from one run.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from egomem.errors import EgomemError
from egomem.server.client import queue_status, stream_recording
from egomem.stream.sources import Recording

# The target for a device served in real time.
MAX_LAG_P95_S = 3.0
# What the worker process runs (`egomem serve`), for the provenance of the results
# (scripts/bench_provenance.py): not imported here, so the import graph alone misses it.
RUNS_IN_SUBPROCESS = ("egomem.cli.main", "egomem.server.app", "egomem.server.serve")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Worker:
    port: int
    proc: subprocess.Popen[bytes]
    log: Path

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def wait_up(self, timeout: float = 300.0) -> None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise EgomemError(f"egomem serve exited with {self.proc.returncode}; its log: {self.log}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.2)
        raise EgomemError(f"egomem serve did not start on port {self.port}")

    def stop(self) -> int | None:
        """Terminate; returns the exit code it had before (None: it was still running)."""
        code = self.proc.poll()
        if code is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        return code

    def peak_rss_mb(self) -> float | None:
        """The worker's peak resident memory so far (VmHWM; None where /proc cannot tell)."""
        try:
            status = Path(f"/proc/{self.proc.pid}/status").read_text()
        except OSError:
            return None
        kb = next((line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")), None)
        return None if kb is None else round(int(kb) / 1024, 1)

    def log_lines(self, *needles: str) -> list[str]:
        """The log's lines that contain any of `needles`."""
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return []
        return [line for line in text.splitlines() if any(n in line for n in needles)]


def start_worker(data_dir: Path, env_overrides: dict[str, str], log: Path) -> Worker:
    port = free_port()
    # The bench streams recordings it owns: nobody in them is asked for consent (`serve` defaults to ask).
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "EGOMEM_PRIVACY__CONSENT": "implicit", **env_overrides}
    cmd = [sys.executable, "-m", "egomem.cli.main", "--data-dir", str(data_dir), "serve", "--port", str(port)]
    with log.open("wb") as out:  # the child keeps its own descriptor
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    return Worker(port, proc, log)


@dataclass
class DeviceRun:
    """One device's stream: every event with the perf_counter time it arrived."""

    t0: float = 0.0
    events: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    error: str | None = None

    def lags(self) -> list[float]:
        """Wall time since the start minus the stream time the event is about (heard, memchunk)."""
        return [w - self.t0 - float(e["time"]) for w, e in self.events if e["type"] in ("heard", "memchunk")]

    def done_after_end_s(self, duration_s: float) -> float | None:
        return next((w - self.t0 - duration_s for w, e in self.events if e["type"] == "done"), None)

    def of_type(self, *types: str) -> list[tuple[float, dict[str, Any]]]:
        return [(w, e) for w, e in self.events if e["type"] in types]


def stream_device(url: str, key: str, rec: Recording, *, realtime: bool = True) -> DeviceRun:
    run = DeviceRun(t0=time.perf_counter())

    def on_event(ev: dict[str, Any]) -> None:
        run.events.append((time.perf_counter(), ev))

    try:
        stream_recording(url, key, rec, realtime=realtime, on_event=on_event)
    except (EgomemError, OSError) as exc:  # the worker went away: recorded, the others go on
        run.error = str(exc)
    except Exception as exc:  # the websocket library's own errors (a closed connection)
        run.error = f"{type(exc).__name__}: {exc}"
    return run


def run_devices(urls: list[str], key: str, rec: Recording, *, realtime: bool = True) -> list[DeviceRun]:
    """One device per url (a url may repeat), all at once; returns when every one is done."""
    runs: list[DeviceRun] = [DeviceRun() for _ in urls]

    def one(i: int) -> None:
        runs[i] = stream_device(urls[i], key, rec, realtime=realtime)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(urls))]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=rec.duration_s * 10 + 120)
    return runs


def keeps_up(runs: list[DeviceRun], duration_s: float, max_backlog_s: float) -> dict[str, Any]:
    """Lag percentiles, and whether every device was served in real time: its session finished
    within `max_backlog_s` of its END, and the p95 event lag at most MAX_LAG_P95_S."""
    lags = np.asarray([x for r in runs for x in r.lags()] or [np.nan])
    done = [d for r in runs if (d := r.done_after_end_s(duration_s)) is not None]
    p50, p95 = float(np.nanpercentile(lags, 50)), float(np.nanpercentile(lags, 95))
    ok = len(done) == len(runs) and max(done) <= max_backlog_s and p95 <= MAX_LAG_P95_S
    return {
        "event_lag_s_p50": p50,
        "event_lag_s_p95": p95,
        "done_after_end_s_max": max(done) if done else None,
        "sessions_completed": len(done),
        "keeps_up": ok,
    }


def drain_queue(url: str, key: str, timeout_s: float) -> dict[str, Any]:
    """The queue at the end of the streams, then polled until its backlog (the model's refining passes
    included) is empty or `timeout_s` passed: what was left, how long it took, and the lag figures
    (session end -> memory committed, over the tenant's recent jobs) once drained."""
    t0 = time.perf_counter()
    at_end = queue_status(url, key)
    now = at_end
    while now["backlog"] > 0 and time.perf_counter() - t0 < timeout_s:
        time.sleep(0.5)
        now = queue_status(url, key)
    return {
        "memory_backlog_end_of_stream": at_end["backlog"],
        "refine_backlog_end_of_stream": at_end["refine_backlog"],
        "memory_backlog_after_drain": now["backlog"],
        "drain_s": round(time.perf_counter() - t0, 1),
        "drained": now["backlog"] == 0,
        "memory_lag_s_p50": now["lag_p50_s"],
        "memory_lag_s_p95": now["lag_p95_s"],
        "refine_lag_s_p50": now["refine_lag_p50_s"],
        "refine_lag_s_p95": now["refine_lag_p95_s"],
        "memory_jobs_failed": now["failed"],
        "memory_jobs_fallbacks": now["fallbacks"],
    }


def capacity(
    urls: list[str], key: str, rec: Recording, max_devices: int, max_backlog_s: float, *, drain_timeout_s: float = 600.0
) -> tuple[dict[str, Any], list[list[Any]], int | None]:
    """Devices 1, 2, ... (round-robin over `urls`) until they are no longer served in real time.
    After each round the memory queue is drained (the next round starts with none of this one's
    work left) and what it held is recorded. Returns the figures by device count, table rows, and
    the count that fell behind (None: none did)."""
    by_devices: dict[str, Any] = {}
    rows: list[list[Any]] = []
    for n in range(1, max_devices + 1):
        runs = run_devices([urls[i % len(urls)] for i in range(n)], key, rec)
        m = keeps_up(runs, rec.duration_s, max_backlog_s)
        m.update(drain_queue(urls[0], key, drain_timeout_s))  # one tenant: every worker writes its queue
        by_devices[str(n)] = m
        done = "-" if m["done_after_end_s_max"] is None else m["done_after_end_s_max"]
        completed, ok = f"{m['sessions_completed']}/{n}", "yes" if m["keeps_up"] else "no"
        drained = m["drain_s"] if m["drained"] else f"> {drain_timeout_s:g}"
        rows.append(
            [
                n,
                m["event_lag_s_p50"],
                m["event_lag_s_p95"],
                done,
                m["memory_backlog_end_of_stream"],
                drained,
                completed,
                ok,
            ]
        )
        if not m["keeps_up"]:
            return by_devices, rows, n
    return by_devices, rows, None


CAPACITY_HEADER = [
    "devices",
    "lag p50 s",
    "lag p95 s",
    "END->done s",
    "memory backlog at done",
    "drained in s",
    "completed",
    "real time",
]
