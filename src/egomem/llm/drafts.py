"""Prompt-lookup drafts for the local model (`llm.draft_tokens`): the tokens an answer copies
(the session's words, its own JSON keys) are checked in one batch instead of one at a time.

A JSON extraction copies much of what it writes: the user's words into its items, and its own keys
and punctuation from its earlier items. After each token the draft is the continuation of the most
recent earlier place where the last few tokens occurred (`RecentLookup`); llama-cpp-python evaluates
the token and its draft in one batch, samples at each position, and keeps the draft up to the first
token the model would not have picked. That pays only where a batch of a few tokens costs little more
than one token. On 2 x86 cores it does not: a batch of 5 cost 2.7 times one token in the product,
and an extraction accepted about 2.5 tokens a step, so drafts saved nothing and the setting is off by
default (docs/benchmarks/xcost.md "Prompt-lookup drafts").

Three things llama-cpp-python does for drafts that the product cannot afford, and what is done here:
- It computes the logits of every prompt token (`logits_all`), needed only at drafted positions:
  ~150k logits per token, seconds of work and hundreds of MB for a 1,000-token prompt. `Drafting`
  keeps them off for the prompt and on from the first sampled token.
- It gives the logits processors (the lazy grammar, the loop stop) the evaluated tokens, drafts
  included, where they must see the accepted ones only. `Drafting` passes them the accepted prefix:
  one more token per call, since each call decides one token of the answer.
- It copies those logits into `Llama.scores` (n_ctx x vocabulary floats: 2.5 GB of address space
  for 4,096 x 151,936), which nothing here reads (sampling reads llama.cpp's own buffer); a page once
  written stays resident. `ScoreRows` maps that array on anonymous memory and gives back the pages
  of rows already decided at every step.
"""

from __future__ import annotations

import mmap
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

Processor = Callable[[npt.NDArray[np.intc], npt.NDArray[np.single]], npt.NDArray[np.single]]


class RecentLookup:
    """llama-cpp-python's draft-model interface: up to `num_pred_tokens` tokens that followed the
    most recent earlier occurrence of the last `max_ngram` tokens (then fewer, down to one).

    The most recent occurrence, not the first (llama-cpp-python's `LlamaPromptLookupDecoding`): an
    answer repeats its own last item's shape and the turn it is quoting, not the system prompt's
    first example. Replayed on 5 recorded greedy extractions (dev scenarios, 624 tokens written),
    drafts of 8 would decide 2.3 tokens per model step with llama-cpp-python's (2-gram, first match)
    and 3.0 with these (3-gram, most recent)."""

    def __init__(self, num_pred_tokens: int, max_ngram: int = 3) -> None:
        self.num_pred_tokens = num_pred_tokens
        self.max_ngram = max_ngram
        self.batched_tokens = 0  # tokens evaluated in drafted batches (the sampled token + its draft)

    def __call__(self, input_ids: npt.NDArray[np.intc], /, **_: Any) -> npt.NDArray[np.intc]:
        draft = self.lookup(np.asarray(input_ids, dtype=np.intc))
        if len(draft):
            self.batched_tokens += 1 + len(draft)
        return draft

    def lookup(self, ids: npt.NDArray[np.intc]) -> npt.NDArray[np.intc]:
        n_ids = len(ids)
        for n in range(min(self.max_ngram, n_ids - 1), 0, -1):
            tail = ids[n_ids - n :]
            windows = np.lib.stride_tricks.sliding_window_view(ids[: n_ids - 1], n)
            hits = np.flatnonzero((windows == tail).all(axis=1))
            if len(hits):
                start = int(hits[-1]) + n
                return ids[start : min(start + self.num_pred_tokens, n_ids)].copy()
        return np.zeros(0, dtype=np.intc)


class ScoreRows:
    """`Llama.scores` on an anonymous mapping whose pages can be given back (`release`)."""

    def __init__(self, rows: int, vocab: int) -> None:
        self.row_bytes = vocab * np.dtype(np.single).itemsize
        # Private: MADV_DONTNEED frees private anonymous pages (a shared mapping would keep them).
        self._map = mmap.mmap(-1, rows * self.row_bytes, flags=mmap.MAP_PRIVATE)
        self.array = np.frombuffer(self._map, dtype=np.single).reshape(rows, vocab)
        self._kept_from = 0  # bytes below this are given back

    def release(self, below_row: int) -> None:
        """Give back the pages that hold only rows before `below_row`."""
        end = below_row * self.row_bytes // mmap.PAGESIZE * mmap.PAGESIZE
        if end > self._kept_from:
            self._map.madvise(mmap.MADV_DONTNEED, self._kept_from, end - self._kept_from)
            self._kept_from = end

    def reset(self) -> None:
        """All pages given back; every row may be written again."""
        self._map.madvise(mmap.MADV_DONTNEED, 0, len(self._map))
        self._kept_from = 0


def install_scores(llm: Any) -> ScoreRows:
    """`llm.scores` with a row for every position of the context, on a `ScoreRows`. (llama-cpp-python
    allocates n_ctx rows only when built with `logits_all`, not for a draft model: n_batch rows, and a
    drafted batch past position n_batch fails to store its logits.)"""
    rows = ScoreRows(int(llm.n_ctx()), int(llm.n_vocab()))
    llm.scores = rows.array
    return rows


class Drafting:
    """The logits processor of one drafted completion, around the completion's own processors (see
    the module docstring). Call `begin()` before the prompt is evaluated and `end()` after."""

    def __init__(self, llm: Any, draft: RecentLookup, scores: ScoreRows, processors: Sequence[Processor] = ()) -> None:
        self.llm, self.draft, self.scores = llm, draft, scores
        self.processors = list(processors)
        self._start: int | None = None  # tokens before the answer
        self.decided = 0  # tokens of the answer decided so far (one per call)
        self._t0 = 0.0
        self.prompt_s: float | None = None  # wall seconds from `begin()` to the first token's decision

    def begin(self) -> None:
        self.llm._logits_all = False  # the prompt: the logits of its last token only
        self.draft.batched_tokens = 0  # the score rows are empty: the last completion's `end()` gave them back
        self._t0 = time.perf_counter()

    def end(self) -> None:
        self.llm._logits_all = False
        self.scores.reset()

    def __call__(self, input_ids: npt.NDArray[np.intc], scores: npt.NDArray[np.single]) -> npt.NDArray[np.single]:
        if self._start is None:
            self._start = len(input_ids)
            self.prompt_s = time.perf_counter() - self._t0
            self.llm._logits_all = True  # from now on batches hold drafts: logits at every position
        accepted = input_ids[: self._start + self.decided]
        self.decided += 1
        self.scores.release(len(accepted) - 1)
        for p in self.processors:
            scores = p(accepted, scores)
        return scores
