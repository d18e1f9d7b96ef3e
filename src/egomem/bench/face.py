"""`egomem bench face`: face verification on real pairs, detect+embed latency, search scaling.

Verification uses L2 distance of dlib descriptors, decided at the one configured
threshold (config.face.threshold, calibrated once, not per set); `best_accuracy` is the
oracle threshold on each set, reported only to show the headroom. Datasets: every
subfolder of --data (default ../shared/data) named faces_* that holds a pairs CSV, a
manifest or one folder per identity; `--set sets=a,b` picks them. A set's labels file
(`labels.csv`, `identities.csv`) is authoritative over its folder names, and photos
labelled `A|B` (several people) are left out of the pairs. Latencies are reported as wall
time and as this process's CPU time (`time.process_time`, all threads).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from egomem.bench import BenchOptions, BenchResult, data_root, register
from egomem.config import load_config
from egomem.errors import InputError
from egomem.identity.index import KeyIndex
from egomem.perception.face import FACE_DIM, FaceEncoder, load_image
from egomem_eval.identity.labelled import IMAGE_EXT, load_set
from egomem_eval.identity.metrics import accuracy_at, auc, best_accuracy, eer

DEFAULT_SETS = ("faces_deepface", "faces_lfw_subset_10x10")


def verify_set(
    enc: FaceEncoder, root: Path, threshold: float, max_items: int | None
) -> tuple[dict[str, Any], list[float]]:
    ls = load_set(root, IMAGE_EXT)
    # A photo labelled "A|B" shows several people: it is no verification pair for either.
    multi = [p for p, ident in ls.items if "|" in ident]
    ls.items = [(p, ident) for p, ident in ls.items if "|" not in ident]
    if max_items:
        ls.items = ls.items[:max_items]
        ls.pairs = [p for p in ls.pairs if p[0] in {i for i, _ in ls.items} or max_items >= len(ls.pairs)][:max_items]
    pairs = ls.all_pairs()
    files = sorted({p for a, b, _ in pairs for p in (a, b)})
    vecs: dict[Path, np.ndarray | None] = {}
    lat, cpu = [], []
    for f in files:
        img = load_image(f)
        t0, c0 = time.perf_counter(), time.process_time()
        obs = enc.observe(img)
        lat.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
        vecs[f] = obs.vector if obs is not None else None
    missed = [f for f, v in vecs.items() if v is None]
    dist, labels = [], []
    for a, b, same in pairs:
        va, vb = vecs[a], vecs[b]
        # A missed detection counts as "different" (the worst case for a same pair).
        dist.append(float(np.linalg.norm(va - vb)) if va is not None and vb is not None else np.inf)
        labels.append(same)
    score, y = -np.asarray(dist), np.asarray(labels)
    finite = np.where(np.isfinite(score), score, -1e9)
    best, best_thr = best_accuracy(finite, y)
    m = {
        "images": len(files),
        "pairs": len(pairs),
        "same_pairs": int(y.sum()),
        "no_face_images": len(missed),
        "multi_face_images_excluded": len(multi),
        "threshold": threshold,
        "accuracy": accuracy_at(finite, y, -threshold),
        "best_accuracy": best,
        "best_threshold": -best_thr,
        "auc": auc(finite, y),
        "eer": eer(finite, y),
        "latency_ms_p50": float(np.percentile(lat, 50)),
        "latency_ms_mean": float(np.mean(lat)),
        "cpu_ms_p50": float(np.percentile(cpu, 50)),
    }
    return m, lat


def search_scaling(sizes: list[int], dim: int = FACE_DIM, queries: int = 50) -> dict[str, dict[str, float]]:
    """Per-query search latency (ms, p50) for exact numpy and HNSW at each index size (synthetic keys)."""
    rng = np.random.default_rng(0)
    out: dict[str, dict[str, float]] = {}
    for n in sizes:
        vecs = rng.standard_normal((n, dim)).astype(np.float32) * 0.1
        items = [(f"u{i}", i, vecs[i]) for i in range(n)]
        row: dict[str, float] = {}
        for mode, ann_min in (("exact", n + 1), ("hnsw", 1)):
            idx = KeyIndex(dim, "l2", ann_min_keys=ann_min)
            idx.add_many(items)
            t0 = time.perf_counter()
            idx.search(vecs[0], 5)  # builds the HNSW graph once
            row[f"{mode}_build_s"] = time.perf_counter() - t0
            qs = rng.standard_normal((queries, dim)).astype(np.float32) * 0.1
            lat = []
            for q in qs:
                t0 = time.perf_counter()
                idx.search(q, 5)
                lat.append((time.perf_counter() - t0) * 1000)
            row[f"{mode}_ms_p50"] = float(np.percentile(lat, 50))
        out[str(n)] = row
    return out


def frame_latency(enc: FaceEncoder, image: Path, n_keys: int, repeats: int) -> tuple[float, float]:
    """Median wall ms and median CPU ms (this process, all threads) of detect + embed +
    search of one 640x480 frame against n_keys keys."""
    from PIL import Image

    img = load_image(image)
    h, w = img.shape[:2]
    s = min(640 / w, 480 / h)
    small = np.asarray(Image.fromarray(img).resize((max(1, round(w * s)), max(1, round(h * s)))))
    frame = np.zeros((480, 640, 3), np.uint8)
    frame[: small.shape[0], : small.shape[1]] = small  # letterbox: keep the face undistorted
    rng = np.random.default_rng(1)
    idx = KeyIndex(FACE_DIM, "l2")
    idx.add_many(
        [(f"u{i}", i, v) for i, v in enumerate(rng.standard_normal((n_keys, FACE_DIM)).astype(np.float32) * 0.1)]
    )
    lat, cpu = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        obs = enc.observe(frame)
        if obs is None:
            raise InputError(f"no face found in the 640x480 test frame made from {image}")
        idx.search(obs.vector, 5)
        lat.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    return float(np.median(lat)), float(np.median(cpu))


@register("face")
def run(options: BenchOptions) -> BenchResult:
    cfg = load_config().face
    data = data_root(options)
    names = options.extra.get("sets")
    sets = names.split(",") if names else [d for d in DEFAULT_SETS if (data / d).is_dir()]
    if not sets:  # --data points at one set itself
        sets, data = [data.name], data.parent
    enc = FaceEncoder(cfg)
    metrics: dict[str, Any] = {}
    rows = []
    first_image: Path | None = None
    for name in sets:
        m, _ = verify_set(enc, data / name, cfg.threshold, 12 if options.quick else None)
        metrics[name] = m
        rows.append(
            [
                name,
                m["images"],
                m["pairs"],
                m["no_face_images"],
                m["accuracy"],
                m["best_accuracy"],
                m["best_threshold"],
                m["auc"],
                m["eer"],
                m["latency_ms_p50"],
                m["cpu_ms_p50"],
            ]
        )
        first_image = first_image or load_set(data / name, IMAGE_EXT).all_pairs()[0][0]
    sizes = [1_000, 10_000] if options.quick else [1_000, 10_000, 100_000]
    timing = options.extra.get("timing", "on") != "off"  # off: verification only (threshold calibration runs)
    scaling = search_scaling(sizes, queries=10 if options.quick else 100) if timing else {}
    metrics["search"] = scaling
    srows = [[n, r["exact_ms_p50"], r["hnsw_ms_p50"], r["hnsw_build_s"]] for n, r in scaling.items()]
    tables = [
        (
            f"face verification (dlib L2, configured threshold {cfg.threshold})",
            [
                "set",
                "images",
                "pairs",
                "no_face",
                "accuracy",
                "best_acc",
                "best_thr",
                "auc",
                "eer",
                "detect+embed_ms_p50",
                "cpu_ms_p50",
            ],
            rows,
        ),
        (
            "identity search latency per query (synthetic 128-d keys, best 5 users)",
            ["keys", "exact_ms_p50", "hnsw_ms_p50", "hnsw_build_s"],
            srows,
        ),
    ]
    if first_image is not None and timing:
        ms, cpu_ms = frame_latency(enc, first_image, 10_000, 3 if options.quick else 10)
        metrics["frame_640x480_ms_p50"] = ms
        metrics["frame_640x480_cpu_ms_p50"] = cpu_ms
        title = "one 640x480 frame: detect + embed + search over 10,000 keys"
        tables.append((title, ["wall_ms_p50", "cpu_ms_p50"], [[ms, cpu_ms]]))
    return BenchResult("face", metrics, tables, ["latencies are wall-clock on a shared 2-core machine; see uptime"])
