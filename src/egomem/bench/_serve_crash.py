"""`bench serve`'s database crash: PostgreSQL killed with SIGKILL under load, restarted, recovered.

Devices on every worker stream day 1. From `restart_at_s` (stream seconds) the benchmark waits
for a memory job to be running (a session being written; at most until `kill_by_s`), counts the
rows of users, facts, episodes and keys by id, and kills the postmaster (`kill -9`, its pid from
postmaster.pid in the data directory): no shutdown checkpoint, the backends go with it. After
`outage_s` (a supervisor's restart delay) it starts the server again (`pg_ctl start`, retried
until the old backends have left the shared memory); PostgreSQL replays its WAL (crash recovery,
read back from the server's log). Rows are counted at once and after the run: every row counted
before must be there. Every device's `done` event says what the outage cost its memory
(`memory_failures`: jobs hit, tried again, rounds failed); the store says which jobs of the phase
were written; egomem_eval.restart_check judges the whole.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa

from egomem.bench._servers import DeviceRun, Worker, run_devices
from egomem.errors import StoreError
from egomem.store import schema as tables
from egomem.store.postgres import PostgresStore
from egomem.stream.sources import Recording
from egomem_eval.restart_check import judge_crash

T = TypeVar("T")
COUNTED = {"users": tables.users, "facts": tables.facts, "episodes": tables.episodes, "keys": tables.identity_keys}
ERROR_NEEDLES = ("StoreError", "StoreUnreachable", "lost the connection", "cannot connect", "Traceback", "failed")
RECOVERY_LINE = "database system was not properly shut down; automatic recovery in progress"
COUNTS = ["rounds_failed", "rounds_recovered", "store_failures", "store_waits", "orphans_taken", "retries_run"]
COUNTS += ["retries_done", "store_refusals"]


@dataclass
class PgServer:
    """The PostgreSQL server in `data_dir` (pg_ctl from `pg_bin`; as user postgres when run as root)."""

    data_dir: Path
    pg_bin: Path

    def _pg_ctl(self, *args: str) -> list[str]:
        cmd = [str(self.pg_bin / "pg_ctl"), "-D", str(self.data_dir), "-l", str(self.log), *args]
        return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd

    @property
    def log(self) -> Path:
        return self.data_dir / "server.log"

    def postmaster_pid(self) -> int:
        return int((self.data_dir / "postmaster.pid").read_text().split()[0])

    def kill(self) -> int:
        """SIGKILL to the postmaster; its pid."""
        pid = self.postmaster_pid()
        os.kill(pid, signal.SIGKILL)
        return pid

    def start(self, timeout_s: float = 60.0) -> int:
        """`pg_ctl start`, again until the killed server's backends have left (they exit when they see
        the postmaster gone; until then the shared memory is in use). Tries it took."""
        deadline = time.monotonic() + timeout_s
        tries = 0
        while True:
            tries += 1
            done = subprocess.run(self._pg_ctl("-w", "-t", "60", "start"), capture_output=True, text=True, timeout=90)
            if done.returncode == 0:
                return tries
            if time.monotonic() > deadline:
                last = (done.stderr or done.stdout).strip().splitlines()[-1:]
                raise StoreError(f"pg_ctl start failed {tries} times: {last}")
            time.sleep(0.2)

    def log_since(self, offset: int) -> str:
        with self.log.open("rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace")

    def log_size(self) -> int:
        return self.log.stat().st_size if self.log.exists() else 0


def snapshot(store: PostgresStore) -> dict[str, set[Any]]:
    """The ids of every user, fact, episode and key row."""
    return {name: {r[0] for r in store.db.fetch_tuples(sa.select(t.c.id))} for name, t in COUNTED.items()}


def phase_jobs(store: PostgresStore, since: float) -> dict[str, tuple[str, int]]:
    """The memory jobs submitted since `since` (wall clock): key -> (status, attempts)."""
    t = tables.memory_jobs.c
    rows = store.db.fetch_tuples(sa.select(t.key, t.status, t.attempts).where(t.enqueued_at >= since))
    return {str(k): (str(s), int(a)) for k, s, a in rows}


def _running_job(store: PostgresStore, since: float) -> str | None:
    t = tables.memory_jobs.c
    query = sa.select(t.key).where(t.status == "running", t.enqueued_at >= since).limit(1)
    rows = store.db.fetch_tuples(query)
    return str(rows[0][0]) if rows else None


def retry_store(call: Callable[[], T], attempts: int = 20) -> T:
    """A call on a connection a crash cut fails with StoreError until the server is back; then it reconnects."""
    for i in range(attempts):
        try:
            return call()
        except StoreError:
            if i == attempts - 1:
                raise
            time.sleep(0.5)
    raise AssertionError("unreachable")


def wait_for_jobs(jobs: Callable[[], dict[str, tuple[str, int]]], limit_s: float, poll_s: float = 1.0) -> float | None:
    """Seconds until no job of the phase is pending or running, waiting at most `limit_s`; None when
    some still are then. The verdict judges what the crash lost, not how fast a slow model drains
    the backlog: that is reported beside it."""
    t0 = time.perf_counter()
    while True:
        if not any(s in ("pending", "running") for s, _ in jobs().values()):
            return round(time.perf_counter() - t0, 1)
        if time.perf_counter() - t0 >= limit_s:
            return None
        time.sleep(poll_s)


def crash_under_load(
    workers: list[Worker],
    key: str,
    rec: Recording,
    watch: PostgresStore,
    server: PgServer,
    *,
    restart_at_s: float,
    kill_by_s: float,
    outage_s: float,
    per_worker: int,
    drain_s: float,
) -> dict[str, Any]:
    urls = [w.url for _ in range(per_worker) for w in workers]
    holder: dict[str, list[DeviceRun]] = {}
    since = time.time() - 1.0  # the phase's jobs (the store's wall clock)
    load = threading.Thread(target=lambda: holder.update(runs=run_devices(urls, key, rec)))
    t_load = time.perf_counter()
    load.start()
    time.sleep(restart_at_s)
    job = None  # a session being written at the kill
    while job is None and time.perf_counter() - t_load < kill_by_s:
        job = _running_job(watch, since)
        if job is None:
            time.sleep(0.02)
    before = retry_store(lambda: snapshot(watch))
    log_at = server.log_size()
    t0 = time.perf_counter()
    server.kill()
    time.sleep(outage_s)
    t_start = time.perf_counter()
    tries = server.start()
    t1 = time.perf_counter()
    after_recovery = retry_store(lambda: snapshot(watch))
    t_ready = time.perf_counter()
    load.join()
    drained_s = wait_for_jobs(lambda: retry_store(lambda: phase_jobs(watch, since)), drain_s)
    at_end = retry_store(lambda: snapshot(watch))
    jobs = retry_store(lambda: phase_jobs(watch, since))
    runs = holder["runs"]
    dones = [e for r in runs for _, e in r.of_type("done")]
    failures = {c: sum(int(d.get("memory_failures", {}).get(c, 0)) for d in dones) for c in COUNTS}
    hit = {k for d in dones for k in d.get("memory_failures", {}).get("jobs_hit", [])}
    retried = {k for d in dones for k in d.get("memory_failures", {}).get("jobs_retried", [])}
    completed = sum(r.done_after_end_s(rec.duration_s) is not None for r in runs)
    alive = [w.proc.poll() is None for w in workers]
    verdict = judge_crash(
        before=before,
        after_recovery=after_recovery,
        at_end=at_end,
        jobs={k: s for k, (s, _) in jobs.items()},
        hit=hit,
        retried=retried,
        failures=failures,
        devices=len(urls),
        sessions_completed=completed,
        workers_alive=alive,
    )
    told = sorted(
        {str(e.get("message") or e.get("text")) for r in runs for w, e in r.of_type("error", "warning") if w >= t0}
    )
    logged = sorted({line.strip()[:200] for w in workers for line in w.log_lines(*ERROR_NEEDLES)})
    lost = {k: len(before[k] - after_recovery[k]) for k in before}
    return {
        "devices": len(urls),
        "killed_at_stream_s": round(t0 - t_load, 1),
        "killed_during_memory_job": job is not None,
        "outage_s": outage_s,
        "pg_start_s": round(t1 - t_start, 2),
        "pg_start_tries": tries,
        "crash_recovery_in_log": RECOVERY_LINE in server.log_since(log_at),
        "kill_to_ready_s": round(t_ready - t0, 2),
        "rows_before": {k: len(v) for k, v in before.items()},
        "rows_after_recovery": {k: len(v) for k, v in after_recovery.items()},
        "rows_lost_at_recovery": lost,
        "rows_lost_total": sum(lost.values()),
        "rows_missing_at_end": {k: len(before[k] - at_end[k]) for k in before},
        "rows_at_end": {k: len(v) for k, v in at_end.items()},
        "memory_failed": {
            "jobs_hit": len(hit),
            "job_attempts_died": failures["store_failures"],
            "hand_overs_waited": failures["store_waits"],
            "claims_orphaned": failures["orphans_taken"],
            "rounds_failed": failures["rounds_failed"],
        },
        "memory_retried": {
            "jobs_hit_tried_again": len(hit & retried),
            "attempts_run_again": failures["retries_run"],  # after any failed attempt, not only the outage's
            "attempts_refused_by_the_store": failures["store_refusals"],
            "rounds_recovered": failures["rounds_recovered"],
        },
        "memory_completed": {
            "jobs_hit_written": sum(jobs.get(k, ("", 0))[0] == "done" for k in hit),
            "attempts_run_again_written": failures["retries_done"],
            "phase_jobs": len(jobs),
            "phase_jobs_written": sum(s == "done" for s, _ in jobs.values()),
            "phase_jobs_with_several_attempts": sum(a > 1 for _, a in jobs.values()),
            "phase_jobs_by_status": dict(sorted(Counter(s for s, _ in jobs.values()).items())),
            "drain_limit_s": drain_s,
            "drained_after_stream_s": drained_s,
        },
        "failed_total": len(hit) + failures["rounds_failed"],
        "retried_total": len(hit & retried) + failures["rounds_recovered"],
        "completed_total": sum(jobs.get(k, ("", 0))[0] == "done" for k in hit) + failures["rounds_recovered"],
        "sessions_completed": completed,
        "device_errors": sorted({r.error for r in runs if r.error}),
        "events_after_restart": [sum(1 for w, e in r.of_type("heard", "memchunk") if w > t1) for r in runs],
        "memory_events_after_restart": sum(1 for r in runs for w, _ in r.of_type("memory") if w > t1),
        "devices_told": told[:10],
        "workers_logged": logged[:20],
        "workers_alive": alive,
        "all_workers_alive": all(alive),
        "verdict_ok": verdict.ok,
        "problems": verdict.problems,
    }


def crash_table(m: dict[str, Any]) -> tuple[str, list[str], list[list[Any]]]:
    head = ["devices", "kill->ready s", "rows before", "lost", "missing at end", "failed", "retried", "written"]
    head += ["completed", "workers alive", "ok"]
    row = [
        m["devices"],
        m["kill_to_ready_s"],
        sum(m["rows_before"].values()),
        m["rows_lost_total"],
        sum(m["rows_missing_at_end"].values()),
        m["failed_total"],
        m["retried_total"],
        m["completed_total"],
        f"{m['sessions_completed']}/{m['devices']}",
        m["all_workers_alive"],
        m["verdict_ok"],
    ]
    return "PostgreSQL killed (kill -9 of the postmaster) mid-stream, restarted, recovered", head, [row]
