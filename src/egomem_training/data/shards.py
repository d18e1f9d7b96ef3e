"""Sharded Parquet output: `streams-NNNNN.parquet` (one row per stream: tokens, codes,
labels, metadata) and `samples-NNNNN.parquet` (one row per sample: its MemChunks and
masks as spans), written together so a shard's samples refer only to its own streams.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from egomem_training.data.layout import LEVEL1_SLOT, LEVEL2_SLOT, slot_tokens
from egomem_training.data.stream import BuiltStream
from egomem_training.data.text_tokens import TextTokenizer

STREAM_SCHEMA = pa.schema(
    [
        ("stream_id", pa.string()),
        ("dialog_steps", pa.int32()),
        ("n_codebooks", pa.int32()),
        ("text", pa.list_(pa.int32())),
        ("listen_codes", pa.list_(pa.int16())),  # (dialog_steps * n_codebooks), row-major
        ("speak_codes", pa.list_(pa.int16())),
        ("labels", pa.list_(pa.int8())),
        ("meta", pa.string()),  # JSON: every random choice, the plan, the voices
    ]
)
_SPANS = pa.list_(pa.list_(pa.int32()))
SAMPLE_SCHEMA = pa.schema(
    [
        ("sample_id", pa.string()),
        ("stream_id", pa.string()),
        ("task", pa.string()),
        ("session_id", pa.string()),
        ("user_id", pa.string()),
        ("turn", pa.int32()),
        ("level1_text", pa.string()),
        ("level2_text", pa.string()),
        ("level1_tokens", pa.list_(pa.int32())),
        ("level2_tokens", pa.list_(pa.int32())),
        ("level1_cut", pa.bool_()),
        ("level2_cut", pa.bool_()),
        ("text_spans", _SPANS),  # [start, end) stream positions
        ("speak_spans", _SPANS),
        ("label_spans", _SPANS),
    ]
)


class ShardWriter:
    def __init__(self, out: Path, text_tok: TextTokenizer, shard_size: int) -> None:
        self.out, self.tok, self.shard_size = out, text_tok, shard_size
        self._streams: list[dict[str, Any]] = []
        self._samples: list[dict[str, Any]] = []
        self.shards: list[str] = []
        self.counts: dict[str, int] = {}

    def add(self, st: BuiltStream) -> None:
        self._streams.append(
            {
                "stream_id": st.stream_id,
                "dialog_steps": int(st.text.size),
                "n_codebooks": int(st.listen_codes.shape[1]),
                "text": st.text.tolist(),
                "listen_codes": st.listen_codes.reshape(-1).tolist(),
                "speak_codes": st.speak_codes.reshape(-1).tolist(),
                "labels": st.labels.tolist(),
                "meta": json.dumps(st.meta, ensure_ascii=False),
            }
        )
        for k, s in enumerate(st.samples):
            l1, cut1 = slot_tokens(self.tok, s.level1_text, LEVEL1_SLOT)
            l2, cut2 = slot_tokens(self.tok, s.level2_text, LEVEL2_SLOT)
            self._samples.append(
                {
                    "sample_id": f"{st.stream_id}-{k:03d}",
                    "stream_id": st.stream_id,
                    "task": s.task,
                    "session_id": s.session_id,
                    "user_id": s.user_id,
                    "turn": s.turn,
                    "level1_text": s.level1_text,
                    "level2_text": s.level2_text,
                    "level1_tokens": l1,
                    "level2_tokens": l2,
                    "level1_cut": cut1,
                    "level2_cut": cut2,
                    "text_spans": [list(x) for x in s.text_spans],
                    "speak_spans": [list(x) for x in s.speak_spans],
                    "label_spans": [list(x) for x in s.label_spans],
                }
            )
            self.counts[s.task] = self.counts.get(s.task, 0) + 1
        if len(self._streams) >= self.shard_size:
            self.flush()

    def flush(self) -> None:
        if not self._streams:
            return
        k = len(self.shards)
        pq.write_table(pa.Table.from_pylist(self._streams, STREAM_SCHEMA), self.out / f"streams-{k:05d}.parquet")
        pq.write_table(pa.Table.from_pylist(self._samples, SAMPLE_SCHEMA), self.out / f"samples-{k:05d}.parquet")
        self.shards.append(f"{k:05d}")
        self._streams, self._samples = [], []
