"""The memory-writing queue as a service reports it: `GET /api/v1/memory/queue` (per tenant) and the
`egomem_memory_queue_*` series of `/metrics` (per tenant whose store this process has open)."""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import APIRouter, Depends
from pydantic import BaseModel

from egomem.server.deps import TenantContext, tenant_context
from egomem.server.metrics import Metrics

router = APIRouter(prefix="/api/v1", tags=["memory"])
Ctx = Annotated[TenantContext, Depends(tenant_context)]


class QueueStatus(BaseModel):
    backlog: int  # pending + running
    pending: int
    running: int
    done: int
    failed: int
    retrying: int  # pending after a failed attempt, in their backoff
    fallbacks: int  # done by the rules after the model failed every attempt
    oldest_pending_s: float | None
    lag_p50_s: float | None  # session end -> memory committed, over the last lag_window jobs
    lag_p95_s: float | None
    lag_window: int
    refine_backlog: int = 0  # the model's passes after the rules' writes, waiting or running (in backlog too)
    refine_lag_p50_s: float | None = None  # session end -> the model's memory committed
    refine_lag_p95_s: float | None = None


@router.get("/memory/queue", response_model=QueueStatus)
def memory_queue(ctx: Ctx) -> QueueStatus:
    """Sessions waiting for extraction, failures, and lag (session end to memory committed)."""
    return QueueStatus.model_validate(ctx.store.job_stats(time.time()).as_dict())


GAUGES = {
    "backlog": "sessions waiting for extraction (pending + running)",
    "failed": "memory jobs that failed for good",
    "retrying": "memory jobs waiting out a backoff after a model failure",
    "fallbacks": "memory jobs the rules answered after the model failed",
    "done": "memory jobs done",
    "oldest_pending_s": "age of the oldest waiting session (seconds since it ended)",
    "lag_p50_s": "session end to memory committed, median over recent jobs (seconds)",
    "lag_p95_s": "session end to memory committed, 95th percentile over recent jobs (seconds)",
    "refine_backlog": "the model's passes over sessions the rules wrote first, waiting or running",
    "refine_lag_p95_s": "session end to the model's pass committed, 95th percentile (seconds)",
}


def describe(metrics: Metrics) -> None:
    for name, text in GAUGES.items():
        metrics.describe(f"egomem_memory_queue_{name}", "gauge", text)


def update(metrics: Metrics, contexts: dict[str, TenantContext]) -> None:
    """Set the queue gauges from each open tenant's store (a store that cannot answer is skipped)."""
    now = time.time()
    for tenant, ctx in list(contexts.items()):
        try:
            stats = ctx.store.job_stats(now).as_dict()
        except Exception:  # a lost database must not take /metrics down
            continue
        for name in GAUGES:
            value = stats[name]
            if value is not None:
                metrics.set(f"egomem_memory_queue_{name}", float(value), tenant=tenant)
