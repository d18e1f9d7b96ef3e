"""`egomem bench serve --set workers=2 --set store=postgres`: a fleet on one PostgreSQL schema.

Two (or more) `egomem serve` workers share one memory: a fresh schema this benchmark creates
and drops (`--set dsn=`, else EGOMEM_TEST_PG_DSN), handed to each worker as
EGOMEM_STORE__SCHEMA_NAME. Both are warmed up (models loaded), then the memory is emptied.

1. Cross-worker enrolment: a device on worker A streams day 1 (Emily introduces herself and
   is enrolled as a new person); the benchmark watches the store and, the moment her first
   face key is committed, a device on worker B starts day 2 (Emily again). Reported: whether
   B's first identification is the person A enrolled (not a new one B enrolled itself), the
   wall time from A's commit to it, and how many of B's polls it took against the debounce
   minimum (`confirm_polls`: the first poll that finds the key plus confirmations) and against
   a device on A itself afterwards (same-worker control).
2. Devices per worker: day-2 devices on worker A alone, 1, 2, ... until not real time
   (bench/_servers.py: `keeps_up`).
3. Database crash under load (`--set restart_pg=DATA_DIR`, the server's data directory;
   pg_ctl from `--set pg_bin=`; bench/_serve_crash.py): devices on every worker stream day 1;
   from `restart_at_s` (default a quarter of the stream), once a memory job is being written (at the
   latest at `kill_by_s`, 0.8 of it), the benchmark counts the rows, kills the postmaster with
   SIGKILL, starts it again after `outage_s` (5 s) and PostgreSQL recovers from its WAL. Every
   row counted before must be there after recovery and at the end; every memory job the outage
   hit must be tried again and written; the workers must live (egomem_eval.restart_check). After
   the stream the benchmark waits up to `drain_s` (twice the stream) for the phase's memory jobs
   to settle before it judges, and reports how long that took (`drained_after_stream_s`, None:
   not within the bound) and the jobs' statuses.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from egomem.bench import BenchOptions, BenchResult
from egomem.bench._serve_crash import PgServer, crash_table, crash_under_load, retry_store
from egomem.bench._servers import (
    CAPACITY_HEADER,
    DeviceRun,
    Worker,
    capacity,
    run_devices,
    start_worker,
    stream_device,
)
from egomem.config import load_config
from egomem.errors import InputError
from egomem.retrieval.polling import PollPolicy
from egomem.runtime.demo import ASSETS
from egomem.schemas import Modality
from egomem.server.tenants import TenantRegistry
from egomem.store.crypto import MASTER_KEY_ENV, FixedKey, new_master_key_text, parse_master_key
from egomem.store.postgres import PostgresStore
from egomem.stream.sources import Recording, read_recording

PG_BIN = "/usr/lib/postgresql/15/bin"


def run_fleet(options: BenchOptions, n_workers: int) -> BenchResult:
    extra = options.extra
    dsn = extra.get("dsn") or os.environ.get("EGOMEM_TEST_PG_DSN", "")
    if not dsn:
        raise InputError("--set store=postgres needs --set dsn=postgresql://... (or EGOMEM_TEST_PG_DSN)")
    if n_workers < 2:
        raise InputError("the fleet mode needs --set workers=2 or more (cross-worker enrolment)")
    max_devices = int(extra.get("max_devices", 2 if options.quick else 8))
    max_backlog = float(extra.get("max_backlog_s", 10.0))
    day1, day2 = read_recording(ASSETS / "day1.mp4"), read_recording(ASSETS / "day2.mp4")
    schema = f"bench_serve_{uuid.uuid4().hex[:10]}"
    env = {"EGOMEM_STORE__PROVIDER": "postgres", "EGOMEM_STORE__DSN": dsn, "EGOMEM_STORE__SCHEMA_NAME": schema}
    # Every worker of a fleet opens the keyring with the same master key: one made for this run.
    master = new_master_key_text()
    env.update({"EGOMEM_PRIVACY__MASTER_KEY": "env", MASTER_KEY_ENV: master})
    if extra.get("llm"):
        env["EGOMEM_LLM__PROVIDER"] = extra["llm"]
    # Creates the schema; the workers find it migrated.
    watch = PostgresStore(dsn, schema=schema, master_key=FixedKey(parse_master_key(master, "this run's key")))
    metrics: dict[str, Any] = {"store": "postgres", "workers": n_workers, "recording_s": round(day2.duration_s, 1)}
    tables_out: list[tuple[str, list[str], list[list[Any]]]] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            cfg = load_config(data_dir=root, environ=env)
            metrics["llm_provider"] = cfg.llm.provider
            reg = TenantRegistry(cfg)
            _, key = reg.create("bench")
            reg.close()
            workers = [start_worker(root, env, root / f"worker{i}.log") for i in range(n_workers)]
            try:
                for w in workers:
                    w.wait_up()
                # Warm-up (the models load), at real-time pace: `egomem client --fast` stalls after the
                # assistant's first line (seen on SQLite too), a bug of its own.
                run_devices([w.url for w in workers], key, day2)
                _forget_everyone(watch)
                cross = cross_worker(workers[0], workers[1], key, day1, day2, watch, cfg.retrieval.poll_interval_s)
                metrics["cross_worker"] = cross
                by_devices, rows, behind = capacity([workers[0].url], key, day2, max_devices, max_backlog)
                held = (behind or max_devices + 1) - 1
                metrics.update(by_devices=by_devices, falls_behind_at_devices=behind, realtime_devices_per_worker=held)
                tables_out.append(
                    (f"devices on one worker ({day2.duration_s:.0f} s day-2 stream)", CAPACITY_HEADER, rows)
                )
                if extra.get("restart_pg"):
                    server = PgServer(Path(extra["restart_pg"]), Path(extra.get("pg_bin", PG_BIN)))
                    metrics["restart"] = crash_under_load(
                        workers,
                        key,
                        day1,
                        watch,
                        server,
                        restart_at_s=float(extra.get("restart_at_s", 0.25 * day1.duration_s)),
                        kill_by_s=float(extra.get("kill_by_s", 0.8 * day1.duration_s)),
                        outage_s=float(extra.get("outage_s", 5.0)),
                        per_worker=max(1, min(held, 2)),
                        drain_s=float(extra.get("drain_s", 2 * day1.duration_s)),
                    )
                    tables_out.append(crash_table(metrics["restart"]))
            finally:
                metrics["worker_exit_codes_before_stop"] = [w.stop() for w in workers]
    finally:
        retry_store(watch.drop_schema)
    metrics["load_avg_1min"] = os.getloadavg()[0]
    tables_out.insert(0, _cross_table(metrics["cross_worker"]))
    notes = [
        f"{n_workers} `egomem serve` workers on one PostgreSQL schema (created and dropped by the run), LLM "
        f"{metrics['llm_provider']}; one worker is real time for {metrics['realtime_devices_per_worker']} device(s)",
        "polls: B's identification is debounced (confirm_polls); the minimum means its first poll found A's key",
    ]
    return BenchResult("serve", metrics, tables_out, notes)


def _forget_everyone(store: PostgresStore) -> None:
    for u in store.list_users():
        store.delete_user(u.id, cause="bench serve: warm-up done")


def cross_worker(
    a: Worker, b: Worker, key: str, day1: Recording, day2: Recording, watch: PostgresStore, poll_s: float
) -> dict[str, Any]:
    holder: dict[str, DeviceRun] = {}
    streaming = threading.Thread(target=lambda: holder.update(a=stream_device(a.url, key, day1)))
    streaming.start()
    enrolled: str | None = None
    while enrolled is None and streaming.is_alive():
        faces = {k.user_id for k in watch.list_keys(Modality.FACE)}
        if faces:
            enrolled, committed = sorted(faces)[0], time.perf_counter()
            break
        time.sleep(0.05)
    if enrolled is None:
        streaming.join()
        return {"enrolled_on_a": False}
    on_b = stream_device(b.url, key, day2)
    streaming.join()
    same = stream_device(a.url, key, day2)  # control: the same person, on the worker that knows her
    first_b = next(iter(on_b.of_type("user")), None)
    first_a = next((e for _, e in same.of_type("user") if e.get("user") == enrolled), None)
    name = retry_store(lambda: watch.get_user(enrolled).name)
    out: dict[str, Any] = {
        "enrolled_on_a": True,
        "name_in_store": name,
        "b_recognises": first_b is not None and first_b[1].get("user") == enrolled,
        "users_in_store": len(watch.list_users()),
        "debounce_polls": PollPolicy().confirm_polls,
        "poll_interval_s": poll_s,
    }
    if first_b is not None:
        out["commit_to_b_identified_s"] = round(first_b[0] - committed, 2)
        out["b_started_after_commit_s"] = round(on_b.t0 - committed, 2)
        out["b_polls_to_identify"] = round(float(first_b[1]["time"]) / poll_s)
    if first_a is not None:
        out["same_worker_polls_to_identify"] = round(float(first_a["time"]) / poll_s)
    if first_b is not None and first_a is not None:
        out["extra_polls_across_workers"] = out["b_polls_to_identify"] - out["same_worker_polls_to_identify"]
    return out


def _cross_table(m: dict[str, Any]) -> tuple[str, list[str], list[list[Any]]]:
    keys = [
        "b_recognises",
        "commit_to_b_identified_s",
        "b_polls_to_identify",
        "same_worker_polls_to_identify",
        "debounce_polls",
        "users_in_store",
    ]
    return "cross-worker enrolment (enrolled through A, identified through B)", keys, [[m.get(k, "-") for k in keys]]
