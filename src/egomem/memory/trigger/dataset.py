"""Feature sets of synthetic streams, extracted in worker processes and cached on disk.

Stream `seed` of a split is fully determined by (split, seed), so a cache entry is keyed
by them and by CACHE_VERSION (bump it when features or the generator change).
"""

from __future__ import annotations

import multiprocessing as mp
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from egomem.memory.trigger.features import FeatureExtractor
from egomem.memory.trigger.metrics import Span
from egomem.memory.trigger.synth import SpeechPools, Split, load_pools, make_pair

CACHE_VERSION = "v1"


@dataclass
class Example:
    feats: np.ndarray  # (steps, N_FEATURES)
    labels: np.ndarray  # (steps,) int8
    sessions: list[Span]
    noised: bool
    seed: int


_worker: tuple[SpeechPools, FeatureExtractor] | None = None


def _init(data_dir: Path, split: Split, max_utts: int = 0, worker_process: bool = True) -> None:
    import torch

    global _worker
    if worker_process:  # one thread per worker; never change the threads of the caller's process
        torch.set_num_threads(1)
    _worker = (load_pools(data_dir, split, max_utts=max_utts), FeatureExtractor.default())


def _extract(seed: int) -> list[tuple[np.ndarray, np.ndarray, list[Span], bool, int]]:
    assert _worker is not None
    pools, fx = _worker
    return [(fx(s.listen, s.speak), s.labels, s.sessions, k == 1, seed) for k, s in enumerate(make_pair(seed, pools))]


def _cache_file(cache: Path, split: Split, seed: int, max_utts: int = 0) -> Path:
    reduced = f"_m{max_utts}" if max_utts > 0 else ""
    return cache / f"{CACHE_VERSION}_{split}{reduced}_{seed}.npz"


def _save(path: Path, items: list[tuple[np.ndarray, np.ndarray, list[Span], bool, int]]) -> None:
    arrays = {}
    for f, lab, spans, noisy, _ in items:
        k = "n" if noisy else "c"
        arrays[f"{k}_feats"], arrays[f"{k}_labels"] = f, lab
        arrays[f"{k}_spans"] = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, **arrays)  # type: ignore[arg-type]
    tmp.replace(path)


def _load(path: Path, seed: int) -> list[Example]:
    with np.load(path) as z:
        return [
            Example(z[f"{k}_feats"], z[f"{k}_labels"], [(int(a), int(b)) for a, b in z[f"{k}_spans"]], k == "n", seed)
            for k in ("c", "n")
        ]


def examples(
    data_dir: Path, split: Split, seeds: list[int], cache: Path | None = None, workers: int = 2, max_utts: int = 0
) -> list[Example]:
    """Clean and noised examples of every seed (cached under `cache` when given).

    workers=0 extracts in this process (no start-up cost: quick runs and tests)."""
    todo = [s for s in seeds if cache is None or not _cache_file(cache, split, s, max_utts).is_file()]
    fresh: dict[int, list[Example]] = {}
    if todo and workers == 0:
        _init(data_dir, split, max_utts, worker_process=False)
        for seed in todo:
            fresh[seed] = [Example(f, lab, spans, noisy, s) for f, lab, spans, noisy, s in _extract(seed)]
    elif todo:
        ctx = mp.get_context("spawn")  # fresh interpreters: no forked ONNX/torch thread state
        with ctx.Pool(max(1, workers), initializer=_init, initargs=(data_dir, split, max_utts)) as pool:
            for items in pool.imap(_extract, todo):
                seed = items[0][4]
                if cache is not None:
                    _save(_cache_file(cache, split, seed, max_utts), items)
                fresh[seed] = [Example(f, lab, spans, noisy, s) for f, lab, spans, noisy, s in items]
    out: list[Example] = []
    for s in seeds:
        out += fresh[s] if s in fresh else _load(_cache_file(cache, split, s, max_utts), s)  # type: ignore[arg-type]
    return out
