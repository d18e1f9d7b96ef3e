"""`egomem bench smoke`: store write/read throughput on a temporary SQLite store.

It exists so the bench entry point is exercised end to end before the heavier
benchmarks land; its figures are real measurements of the embedded store.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from egomem.bench import BenchOptions, BenchResult, register
from egomem.schemas import Fact, Modality
from egomem.store.sqlite import SQLiteStore


@register("smoke")
def run(options: BenchOptions) -> BenchResult:
    n_users = 50 if options.quick else 500
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(Path(tmp) / "bench.db")
        t0 = time.perf_counter()
        for i in range(n_users):
            with store.transaction():
                u = store.create_user(f"user {i}")
                store.add_key(u.id, Modality.FACE, rng.standard_normal(128), "dlib_resnet_v1")
                store.add_fact(Fact(user_id=u.id, text=f"likes item {i}"))
        write_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        keys = store.list_keys(Modality.FACE)
        read_s = time.perf_counter() - t0
        store.close()
    metrics = {
        "users": n_users,
        "user_writes_per_s": n_users / write_s,
        "key_load_ms": read_s * 1000,
        "keys_loaded": len(keys),
    }
    rows = [[k, v] for k, v in metrics.items()]
    return BenchResult("smoke", metrics, [("store smoke (SQLite, temp dir)", ["metric", "value"], rows)])
