"""`egomem status` (the memory-writing queue: backlog, lag, failures) and `egomem worker` (takes its jobs)."""

from __future__ import annotations

import json
import signal
import threading
import time
from typing import Any

import click

from egomem.store.base import QueueStats


def _seconds(v: float | None) -> str:
    return "-" if v is None else f"{v:.1f} s"


def render_status(stats: QueueStats) -> str:
    lines = [
        f"memory queue: {stats.backlog} waiting ({stats.pending} pending, {stats.running} running)",
        f"  done {stats.done}, failed {stats.failed}, retrying {stats.retrying},"
        f" answered by the rules {stats.fallbacks}",
        f"  oldest waiting session ended {_seconds(stats.oldest_pending_s)} ago",
        f"  lag (session end -> memory committed) over the last {stats.lag_window}:"
        f" p50 {_seconds(stats.lag_p50_s)}, p95 {_seconds(stats.lag_p95_s)}",
        f"  the model's passes after the rules' writes: {stats.refine_backlog} waiting;"
        f" lag p50 {_seconds(stats.refine_lag_p50_s)}, p95 {_seconds(stats.refine_lag_p95_s)}",
    ]
    return "\n".join(lines)


@click.command("status")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def status(c: Any, as_json: bool) -> None:
    """The memory-writing queue: sessions waiting for extraction, failures, lag."""
    store = c.store()
    try:
        stats = store.job_stats(time.time())
    finally:
        store.close()
    if as_json:
        click.echo(json.dumps({"memory_queue": stats.as_dict()}, indent=2))
    else:
        click.echo(render_status(stats))


@click.command("worker")
@click.option("--once", is_flag=True, help="Stop when no job is left instead of waiting for more.")
@click.pass_obj
def worker(c: Any, once: bool) -> None:
    """Take memory-writing jobs: from procrastinate on PostgreSQL (memory.queue = "fleet"), else from the
    store's table. Stops on Ctrl-C or SIGTERM after the job in hand."""
    from egomem.memory.job_worker import JobWorker
    from egomem.memory.jobs import MemoryJobs, RetryPolicy
    from egomem.runtime.memory_queue import fleet_queue
    from egomem.runtime.services import Services

    cfg = c.config
    store = c.store()
    try:
        manager = Services(cfg, store).manager  # the composition root: the agent's own manager
        jobs = MemoryJobs(store, manager, RetryPolicy.from_config(cfg.memory))
        if cfg.memory.queue == "fleet":
            fleet_queue(cfg, jobs).run_worker(wait=not once)
            return
        if once:
            n = jobs.drain()
            click.echo(f"ran {n} memory job(s)", err=True)
            return
        stop = threading.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
        thread = JobWorker(jobs).start()
        click.echo("taking memory jobs (Ctrl-C stops)", err=True)
        stop.wait()
        thread.stop(drain=False)
    finally:
        store.close()
