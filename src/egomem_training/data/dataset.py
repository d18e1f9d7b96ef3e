"""A PyTorch `Dataset` over the shards `egomem data build` writes (the only module here that
imports torch at the top).

Item i is one sample, assembled to the full stream length T = 768 + dialog steps:
- `text` (T,) int64: the Level-1 chunk's tokens from 0, the Level-2 chunk's from 512,
  `<pad>` after each, then the monologue;
- `listen`, `speak` (T, K) int64 audio codes, -1 at the MemChunk positions (no audio);
- `text_mask`, `speak_mask` (T,) bool: the positions this sample's loss covers;
- `labels` (T,) int64 trigger labels, -100 (ignore) at the MemChunk positions;
  `label_mask` (T,) bool: set for the trigger sample only;
- `task`, `sample_id`, `stream_id` strings.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import torch
from torch.utils.data import Dataset

from egomem.errors import InputError
from egomem_training.data.layout import DIALOG_START, LEVEL1_SLOT, LEVEL2_SLOT

IGNORE = -100


class StreamSamples(Dataset[dict[str, Any]]):
    def __init__(self, root: Path, tasks: Sequence[str] | None = None) -> None:
        manifest = root / "manifest.json"
        if not manifest.is_file():
            raise InputError(f"{root}: no manifest.json (not an `egomem data build` output)")
        self.root = root
        self.manifest = json.loads(manifest.read_text(encoding="utf-8"))
        self.pad_id = _pad_id(json.loads((root / "tokenizer.json").read_text(encoding="utf-8")))
        rows: list[dict[str, Any]] = []
        for shard in self.manifest["shards"]:
            for r in pq.read_table(root / f"samples-{shard}.parquet").to_pylist():
                if tasks is None or r["task"] in tasks:
                    rows.append(r | {"shard": shard})
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    @lru_cache(maxsize=2)  # noqa: B019  (one dataset per process; the shard being read stays in memory)
    def _streams(self, shard: str) -> dict[str, dict[str, Any]]:
        return {r["stream_id"]: r for r in pq.read_table(self.root / f"streams-{shard}.parquet").to_pylist()}

    def stream(self, stream_id: str, shard: str) -> dict[str, Any]:
        return self._streams(shard)[stream_id]

    def __getitem__(self, i: int) -> dict[str, Any]:
        r = self.rows[i]
        st = self.stream(r["stream_id"], r["shard"])
        d, k = st["dialog_steps"], st["n_codebooks"]
        total = DIALOG_START + d
        text = np.full(total, self.pad_id, dtype=np.int64)
        text[LEVEL1_SLOT[0] : LEVEL1_SLOT[0] + len(r["level1_tokens"])] = r["level1_tokens"]
        text[LEVEL2_SLOT[0] : LEVEL2_SLOT[0] + len(r["level2_tokens"])] = r["level2_tokens"]
        text[DIALOG_START:] = st["text"]
        listen = np.full((total, k), -1, dtype=np.int64)
        speak = np.full((total, k), -1, dtype=np.int64)
        listen[DIALOG_START:] = np.asarray(st["listen_codes"], dtype=np.int64).reshape(d, k)
        speak[DIALOG_START:] = np.asarray(st["speak_codes"], dtype=np.int64).reshape(d, k)
        labels = np.full(total, IGNORE, dtype=np.int64)
        labels[DIALOG_START:] = st["labels"]
        return {
            "sample_id": r["sample_id"],
            "stream_id": r["stream_id"],
            "task": r["task"],
            "text": torch.from_numpy(text),
            "listen": torch.from_numpy(listen),
            "speak": torch.from_numpy(speak),
            "labels": torch.from_numpy(labels),
            "text_mask": torch.from_numpy(_mask(r["text_spans"], total)),
            "speak_mask": torch.from_numpy(_mask(r["speak_spans"], total)),
            "label_mask": torch.from_numpy(_mask(r["label_spans"], total)),
        }


def _mask(spans: list[list[int]], total: int) -> np.ndarray:
    m = np.zeros(total, dtype=bool)
    for a, b in spans:
        m[a:b] = True
    return m


def _pad_id(tok: dict[str, Any]) -> int:
    if tok["kind"] == "words":
        return int(tok["vocab"].index("<pad>"))
    if tok["kind"] == "bytes":
        return int(tok["specials"].index("<pad>"))
    return int(tok["specials"]["<pad>"])
