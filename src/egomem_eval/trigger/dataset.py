"""Feature sets of synthetic streams, extracted in worker processes and cached on disk.

Stream `seed` of a split and condition is fully determined by (split, condition, seed) and
the assistant's voice, so a cache entry is keyed by them and by CACHE_VERSION (bump it
when features or the generator change).
"""

from __future__ import annotations

import multiprocessing as mp
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from egomem.memory.trigger.features import FeatureExtractor
from egomem.memory.trigger.metrics import Span
from egomem_eval.trigger.synth import AssistantVoice, SpeechPools, Split, load_pools, make_pair

CACHE_VERSION = "v2"

StreamId = tuple[str, int]  # (condition, seed)


@dataclass
class Example:
    feats: np.ndarray  # (steps, N_FEATURES)
    labels: np.ndarray  # (steps,) int8
    sessions: list[Span]
    noised: bool
    seed: int
    condition: str = "runtime"


_Item = tuple[np.ndarray, np.ndarray, list[Span], bool, int, str]
_worker: tuple[SpeechPools, FeatureExtractor] | None = None


def _init(
    data_dir: Path, split: Split, max_utts: int = 0, voice: AssistantVoice | None = None, worker_process: bool = True
) -> None:
    import torch

    global _worker
    if worker_process:  # one thread per worker; never change the threads of the caller's process
        torch.set_num_threads(1)
    _worker = (load_pools(data_dir, split, max_utts=max_utts, voice=voice), FeatureExtractor.default())


def _extract(sid: StreamId) -> list[_Item]:
    assert _worker is not None
    pools, fx = _worker
    cond, seed = sid
    pair = make_pair(seed, pools, cond)
    return [(fx(s.listen, s.speak), s.labels, s.sessions, k == 1, seed, cond) for k, s in enumerate(pair)]


def _cache_file(cache: Path, split: Split, sid: StreamId, max_utts: int = 0, voice: str = "3080") -> Path:
    reduced = f"_m{max_utts}" if max_utts > 0 else ""
    return cache / f"{CACHE_VERSION}_{split}_{voice}_{sid[0]}{reduced}_{sid[1]}.npz"


def _save(path: Path, items: list[_Item]) -> None:
    arrays = {}
    for f, lab, spans, noisy, *_ in items:
        k = "n" if noisy else "c"
        arrays[f"{k}_feats"], arrays[f"{k}_labels"] = f, lab
        arrays[f"{k}_spans"] = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, **arrays)  # type: ignore[arg-type]
    tmp.replace(path)


def _load(path: Path, sid: StreamId) -> list[Example]:
    with np.load(path) as z:
        return [
            Example(
                z[f"{k}_feats"],
                z[f"{k}_labels"],
                [(int(a), int(b)) for a, b in z[f"{k}_spans"]],
                k == "n",
                sid[1],
                sid[0],
            )
            for k in ("c", "n")
        ]


def examples(
    data_dir: Path,
    split: Split,
    streams: list[StreamId],
    cache: Path | None = None,
    workers: int = 2,
    max_utts: int = 0,
    voice: AssistantVoice | None = None,
) -> list[Example]:
    """Clean and noised examples of every (condition, seed) (cached under `cache` when given).

    workers=0 extracts in this process (no start-up cost: quick runs and tests)."""
    vname = voice.name if voice is not None else "3080"
    todo = [s for s in streams if cache is None or not _cache_file(cache, split, s, max_utts, vname).is_file()]
    fresh: dict[StreamId, list[Example]] = {}
    if todo and workers == 0:
        _init(data_dir, split, max_utts, voice, worker_process=False)
        for sid in todo:
            items = _extract(sid)
            if cache is not None:
                _save(_cache_file(cache, split, sid, max_utts, vname), items)
            fresh[sid] = [Example(*item) for item in items]
    elif todo:
        ctx = mp.get_context("spawn")  # fresh interpreters: no forked ONNX/torch thread state
        with ctx.Pool(max(1, workers), initializer=_init, initargs=(data_dir, split, max_utts, voice)) as pool:
            for items in pool.imap(_extract, todo):
                sid = (items[0][5], items[0][4])
                if cache is not None:
                    _save(_cache_file(cache, split, sid, max_utts, vname), items)
                fresh[sid] = [Example(*item) for item in items]
    out: list[Example] = []
    for s in streams:
        out += fresh[s] if s in fresh else _load(_cache_file(cache, split, s, max_utts, vname), s)  # type: ignore[arg-type]
    return out
