"""Stop a greedy answer that has started to repeat itself.

Greedy decoding can fall into a loop: on a long monologue the 1.5B model wrote the same item
(`{"kind": "fact", "text": "works as a user", "source_text": ...}`) again and again until its
768 tokens ran out, some 40 CPU-seconds on 2 cores for an answer that is thrown away. `LoopStop`
runs as the last logits processor and, once the answer ends in one block of tokens written three
times in a row, allows only the end-of-generation token: the answer stops where it is and the
provider reports it as looped. What was written before the first copy of the block is kept
(`block`: the repeated tokens): the complete items there still stand where the schema allows
(llm/partial_json.py), and the rules answer for the rest. An answer that does not repeat a block
three times running is not touched: greedy output is otherwise unchanged.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

MIN_BLOCK = 16  # tokens: a shorter repeat is JSON punctuation or a list of like items
MAX_BLOCK = 400
COPIES = 3


def loop_length(tokens: npt.NDArray[np.intc], min_block: int = MIN_BLOCK, copies: int = COPIES) -> int:
    """The length of the shortest block of at least `min_block` tokens that `tokens` end in,
    written `copies` times in a row; 0 when they do not end so."""
    n = len(tokens)
    longest = min(MAX_BLOCK, n // copies)
    if longest < min_block:
        return 0
    last = tokens[-1]
    for p in range(min_block, longest + 1):
        if tokens[-1 - p] != last:
            continue
        block = tokens[n - p :]
        if all(np.array_equal(block, tokens[n - (k + 1) * p : n - k * p]) for k in range(1, copies)):
            return p
    return 0


class LoopStop:
    """A logits processor for one completion: ends the answer once it loops (`looped` then true)."""

    def __init__(self, eos_token: int) -> None:
        self.eos_token = eos_token
        self._start: int | None = None  # tokens before the answer (the prompt)
        self.looped = False
        self.block: list[int] = []  # the tokens written COPIES times in a row, once looped

    def __call__(self, input_ids: npt.NDArray[np.intc], scores: npt.NDArray[np.single]) -> npt.NDArray[np.single]:
        if self._start is None:
            self._start = len(input_ids)
        if not self.looped and (p := loop_length(input_ids[self._start :])):
            self.looped = True
            self.block = [int(t) for t in input_ids[len(input_ids) - p :]]
        if self.looped:
            out = np.full(len(scores), -np.inf, dtype=np.single)
            out[self.eos_token] = 0.0
            return out
        return scores
