"""`egomem bench serve`: simulated devices stream to `egomem serve` on loopback.

The server runs in its own process (as deployed); each device streams the demo's day-2
recording (camera + microphone) at real-time pace in its own thread, through the
reference client. For N = 1, 2, ... we measure the event lag — wall time since the
device started streaming minus the stream time the event is about, for `heard` and
`memchunk` events; part of it is inherent: a turn is heard only after 0.8 s of silence,
then transcribed — and the time from END to the server's `done`. N devices are served in
real time when every session is finished (final memory round included) within
`max_backlog_s` (default 10 s) of the device's END and the p95 event lag is at most 3 s
(the issue's target). After each round the server's memory-writing queue (`GET /api/v1/memory/queue`)
is read at the devices' `done` (backlog, the model's refining passes included) and polled until it
drains (`drain_timeout_s`, default 600): backlog then, drain time, memory lag p50/p95 (session end ->
memory committed, over the tenant's jobs so far) and failures; the worker's peak RSS is read from
/proc at the end. Bounded: at most `max_devices` (default 4) devices, one recording each.
`--set llm=rules` (any registered LLM provider) starts the server with that provider for
memory extraction instead of the default (the local GGUF model); recorded as `llm_provider`.

`--set workers=2 --set store=postgres` runs a fleet on one PostgreSQL schema instead
(bench/_serve_fleet.py): cross-worker enrolment, devices per worker, a database restart.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from egomem.bench import BenchOptions, BenchResult, register
from egomem.bench._servers import CAPACITY_HEADER, capacity, start_worker, stream_device
from egomem.config import load_config
from egomem.errors import InputError
from egomem.runtime.demo import ASSETS
from egomem.server.tenants import TenantRegistry
from egomem.stream.sources import read_recording


@register("serve")
def run(options: BenchOptions) -> BenchResult:
    workers = int(options.extra.get("workers", 1))
    store = options.extra.get("store", "sqlite")
    if store not in ("sqlite", "postgres"):
        raise InputError(f"--set store= takes sqlite or postgres, not {store!r}")
    if workers < 1 or (workers > 1 and store != "postgres"):
        raise InputError("several workers share one memory only on PostgreSQL: --set workers=N --set store=postgres")
    if store == "postgres":
        from egomem.bench._serve_fleet import run_fleet

        return run_fleet(options, workers)
    return _one_worker(options)


def _one_worker(options: BenchOptions) -> BenchResult:
    max_devices = int(options.extra.get("max_devices", 2 if options.quick else 4))
    max_backlog = float(options.extra.get("max_backlog_s", 10.0))
    rec = read_recording(ASSETS / "day2.mp4")
    metrics: dict[str, Any] = {"recording_s": round(rec.duration_s, 1), "store": "sqlite", "workers": 1}
    llm = options.extra.get("llm")
    overrides = {"EGOMEM_LLM__PROVIDER": llm} if llm else {}
    with tempfile.TemporaryDirectory() as tmp:
        cfg = load_config(data_dir=tmp, environ=overrides)
        metrics["llm_provider"] = cfg.llm.provider
        reg = TenantRegistry(cfg)
        _, key = reg.create("bench")
        reg.close()
        worker = start_worker(Path(tmp), overrides, Path(tmp) / "serve.log")
        try:
            worker.wait_up()
            stream_device(worker.url, key, rec)  # warm-up (the server loads its models); --fast stalls: a bug
            drain_timeout = float(options.extra.get("drain_timeout_s", 600.0))
            by_devices, rows, behind_at = capacity(
                [worker.url], key, rec, max_devices, max_backlog, drain_timeout_s=drain_timeout
            )
            # models, the warm-up and every round in it (one server process)
            metrics["server_peak_rss_mb"] = worker.peak_rss_mb()
        finally:
            worker.stop()
    metrics["by_devices"] = by_devices
    metrics["falls_behind_at_devices"] = behind_at
    metrics["load_avg_1min"] = os.getloadavg()[0]
    table = (
        f"bench serve: devices streaming {rec.duration_s:.0f} s of camera + microphone at real-time pace",
        [*CAPACITY_HEADER[:-1], f"real time (done <= {max_backlog:g} s, lag p95 <= 3 s)"],
        rows,
    )
    notes = [
        "lag = wall time since the device started minus the stream time of the event (heard / memchunk)",
        f"server in its own process on 127.0.0.1; falls behind at {behind_at or f'> {max_devices}'} device(s)",
        "memory backlog: sessions waiting or being written (the model's passes included) when the last device's "
        "`done` came; drained: until none were",
        f"server peak RSS {metrics['server_peak_rss_mb']} MB",
    ]
    return BenchResult("serve", metrics, [table], notes)
