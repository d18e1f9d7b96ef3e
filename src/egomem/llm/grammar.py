"""The JSON-schema grammar checked only where it matters: greedy decoding that picks exactly what
decoding under the full grammar picks, at a fraction of its cost.

llama-cpp-python puts the grammar in the sampler chain, which applies it to every one of the
vocabulary's candidates (151,936 for Qwen2.5) at every generated token: 25 ms a token on 2 cores,
a seventh of the model's time per session (docs/benchmarks/xcost.md). llama.cpp's own
`common_sampler` does it lazily, and so does `GrammarOnRefusal`: take the model's best token, ask
the grammar about that one token, and apply the grammar to the whole vocabulary only when it is
refused. Under greedy decoding the answer is the same token either way (the best token the grammar
allows is the best token, when it is allowed), so the output is unchanged; only the cost moves.

It runs as a logits processor (llama-cpp-python calls it once per generated token, with the
tokens evaluated so far) over its own grammar sampler, which it feeds every token the model has
taken since the previous call. Not for speculative decoding (a rejected draft would have to be
taken back out of the grammar): the provider keeps the grammar in the chain then.
"""

from __future__ import annotations

import ctypes
import importlib
from typing import Any

import numpy as np
import numpy.typing as npt

from egomem.llm.base import LLMError

_TOKEN_DATA = np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)], align=True)


class GrammarOnRefusal:
    """A logits processor for one completion: a grammar (GBNF text, root rule "root") enforced on
    greedy decoding by checking the model's best token first. `close()` frees the grammar."""

    def __init__(self, llm: Any, grammar: str) -> None:
        self._c = importlib.import_module("llama_cpp")
        self._smpl = self._c.llama_sampler_init_grammar(llm._model.vocab, grammar.encode("utf-8"), b"root")
        if not self._smpl:
            raise LLMError("local model failed", "the JSON grammar did not compile")
        self.n_vocab = int(llm.n_vocab())
        self._one = np.zeros(1, dtype=_TOKEN_DATA)
        self._all = np.zeros(self.n_vocab, dtype=_TOKEN_DATA)
        self._ids = np.arange(self.n_vocab, dtype=np.intc)
        self._taken: int | None = None  # tokens evaluated when last called (the prompt, at first)
        self.steps = 0  # tokens decided
        self.refused = 0  # of which the model's best token broke the grammar (the whole vocabulary checked)

    def _apply(self, data: npt.NDArray[Any]) -> None:
        ptr = data.ctypes.data_as(self._c.llama_token_data_p)
        arr = self._c.llama_token_data_array(data=ptr, size=len(data), selected=-1, sorted=False)
        self._c.llama_sampler_apply(self._smpl, ctypes.byref(arr))

    def __call__(self, input_ids: npt.NDArray[np.intc], scores: npt.NDArray[np.single]) -> npt.NDArray[np.single]:
        if self._taken is None:
            self._taken = len(input_ids)
        for token in input_ids[self._taken :]:  # what the model took since: the grammar moves on
            self._c.llama_sampler_accept(self._smpl, int(token))
        self._taken = len(input_ids)
        self.steps += 1
        best = int(np.argmax(scores))
        self._one["id"], self._one["logit"], self._one["p"] = best, scores[best], 0.0
        self._apply(self._one)
        if np.isfinite(self._one["logit"][0]):  # allowed: it is the grammar's best too
            out = np.full(len(scores), -np.inf, dtype=np.single)
            out[best] = scores[best]
            return out
        self.refused += 1
        self._all["id"], self._all["logit"], self._all["p"] = self._ids, scores, 0.0
        self._apply(self._all)  # in place: refused tokens to -inf, order kept
        return np.asarray(self._all["logit"], dtype=np.single)

    def close(self) -> None:
        if self._smpl:
            self._c.llama_sampler_free(self._smpl)
            self._smpl = None
