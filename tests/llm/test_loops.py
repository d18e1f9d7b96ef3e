"""`LoopStop` (llm/loops.py): a greedy answer that repeats one block three times in a row is ended."""

from __future__ import annotations

import numpy as np

from egomem.llm.loops import LoopStop, loop_length

ITEM = list(range(100, 130))  # one item's 30 tokens


def _ids(*parts: list[int]) -> np.ndarray:
    return np.array([t for p in parts for t in p], dtype=np.intc)


def test_a_block_written_three_times_in_a_row_is_a_loop() -> None:
    assert loop_length(_ids([1, 2, 3], ITEM, ITEM, ITEM)) == len(ITEM)
    assert not loop_length(_ids([1, 2, 3], ITEM, ITEM))  # twice: a duplicate, not yet a loop
    assert not loop_length(_ids(ITEM, [7], ITEM, [8], ITEM))  # like items, each one different
    assert not loop_length(_ids([5] * 15))  # short runs (punctuation, spaces) are no loop
    assert loop_length(_ids([5] * 48)) == 16  # the shortest block that repeats
    assert not loop_length(_ids(ITEM, ITEM, ITEM, [9]))  # the loop must be where the answer ends


def test_loop_stop_allows_only_the_end_token_once_the_answer_loops() -> None:
    prompt = [0] * 50
    stop = LoopStop(eos_token=2)
    scores = np.zeros(200, dtype=np.single)
    assert stop(_ids(prompt), scores) is scores  # the prompt itself never counts
    assert stop(_ids(prompt, ITEM, ITEM), scores) is scores and not stop.looped
    out = stop(_ids(prompt, ITEM, ITEM, ITEM), scores)
    assert stop.looped and int(np.argmax(out)) == 2 and np.isinf(out[np.arange(200) != 2]).all()
    assert stop.block == ITEM  # what the provider cuts off the answer, all three copies


def test_a_prompt_that_repeats_itself_is_not_a_loop_of_the_answer() -> None:
    stop = LoopStop(eos_token=2)
    scores = np.zeros(200, dtype=np.single)
    stop(_ids(ITEM, ITEM, ITEM), scores)  # the prompt: three copies
    assert not stop.looped
    stop(_ids(ITEM, ITEM, ITEM, [4]), scores)
    assert not stop.looped
