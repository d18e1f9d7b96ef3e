"""The memory-writing queue in the service: `GET /api/v1/memory/queue` per tenant and the
`egomem_memory_queue_*` gauges of /metrics."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from egomem.config import load_config
from egomem.server.app import create_app
from egomem.server.tenants import TenantRegistry


def test_queue_status_per_tenant_and_in_metrics(tmp_path: Path) -> None:
    cfg = load_config(data_dir=tmp_path, environ={})
    reg = TenantRegistry(cfg)
    _, key_a = reg.create("home-a")
    _, key_b = reg.create("home-b")
    store = reg.store("home-a")
    # Two sessions waiting and one done 30 s after its session ended (written as the queue does).
    for ep in ("e1", "e2", "e3"):
        store.submit_job(f"local:{ep}", ep, "{}", session_end=1000.0, now=1000.0)
    job = store.claim_job("w", 1000.0, lease_s=900.0, key="local:e1")
    assert job is not None
    store.finish_job("local:e1", "w", outcome="done", now=1030.0)
    try:
        with TestClient(create_app(cfg, reg)) as client:
            a = client.get("/api/v1/memory/queue", headers={"Authorization": f"Bearer {key_a}"}).json()
            assert (a["backlog"], a["pending"], a["done"], a["failed"], a["lag_p50_s"]) == (2, 2, 1, 0, 30.0)
            b = client.get("/api/v1/memory/queue", headers={"Authorization": f"Bearer {key_b}"}).json()
            assert (b["backlog"], b["done"], b["lag_p95_s"]) == (0, 0, None)  # tenants see their own queue
            assert client.get("/api/v1/memory/queue").status_code == 401
            text = client.get("/metrics").text
            assert 'egomem_memory_queue_backlog{tenant="home-a"} 2.0' in text
            assert 'egomem_memory_queue_lag_p95_s{tenant="home-a"} 30.0' in text
            assert 'egomem_memory_queue_backlog{tenant="home-b"} 0.0' in text
            assert "# TYPE egomem_memory_queue_backlog gauge" in text
    finally:
        reg.close()
