"""Prompt-lookup drafting (llm/drafts.py): the draft is the most recent continuation of the last
tokens, the processors it wraps see only accepted tokens, and decided score rows are given back.
The fast tests use no model; the slow one drafts real extractions and checks the answer holds."""

from __future__ import annotations

import mmap
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from egomem.llm.drafts import Drafting, RecentLookup, ScoreRows


def _ids(*xs: int) -> npt.NDArray[np.intc]:
    return np.array(xs, dtype=np.intc)


def test_the_draft_continues_the_most_recent_occurrence_of_the_longest_tail() -> None:
    d = RecentLookup(num_pred_tokens=3)
    # "1 2 3" occurs twice before the tail; the later one (followed by 7 8 9) wins over 4 5 6.
    ids = _ids(1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 7, 8, 9, 0, 1, 2, 3)
    assert d(ids).tolist() == [7, 8, 9]
    assert d.batched_tokens == 4  # the sampled token and its three drafts, in one batch


def test_a_longer_tail_beats_a_more_recent_shorter_one() -> None:
    d = RecentLookup(num_pred_tokens=2)
    # Tail "5 6 7": its 3-gram occurs once (-> 8 9); "6 7" alone occurs later (-> 1 1).
    ids = _ids(5, 6, 7, 8, 9, 0, 6, 7, 1, 1, 5, 6, 7)
    assert d(ids).tolist() == [8, 9]


def test_no_occurrence_no_draft() -> None:
    d = RecentLookup(num_pred_tokens=4)
    assert d(_ids(1, 2, 3)).tolist() == []
    assert d(_ids(7)).tolist() == []
    assert d.batched_tokens == 0  # nothing batched: the next step is an ordinary one-token step


def test_the_draft_stops_at_the_end_of_what_is_known() -> None:
    d = RecentLookup(num_pred_tokens=8)
    assert d(_ids(4, 9, 1, 4)).tolist() == [9, 1, 4]


class _FakeLlama:
    """Plumbing stand-in: only the attribute Drafting switches."""

    _logits_all = True


def test_the_wrapped_processors_see_only_accepted_tokens() -> None:
    llm: Any = _FakeLlama()
    seen: list[list[int]] = []

    def record(ids: npt.NDArray[np.intc], scores: npt.NDArray[np.single]) -> npt.NDArray[np.single]:
        seen.append(ids.tolist())
        return scores

    drafting = Drafting(llm, RecentLookup(4), ScoreRows(16, 8), [record])
    drafting.begin()
    assert llm._logits_all is False  # the prompt: last token's logits only
    scores = np.zeros(8, dtype=np.single)
    # As llama-cpp-python calls it: the prompt (3 tokens); then token 10 evaluated with drafts 11, 12
    # (the evaluated ids run past the position being decided), 11 accepted, 12 refused for 13, which
    # is evaluated next.
    drafting(_ids(1, 2, 3), scores)
    assert llm._logits_all is True  # from the first decision on: drafted batches need every logit
    drafting(_ids(1, 2, 3, 10, 11, 12), scores)
    drafting(_ids(1, 2, 3, 10, 11, 12), scores)
    drafting(_ids(1, 2, 3, 10, 11, 13), scores)
    assert seen == [[1, 2, 3], [1, 2, 3, 10], [1, 2, 3, 10, 11], [1, 2, 3, 10, 11, 13]]
    drafting.end()
    assert llm._logits_all is False


def _resident_pages(rows: ScoreRows) -> int:
    """Pages of the mapping in RAM (mincore), as the kernel sees them."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    n = (rows.array.nbytes + mmap.PAGESIZE - 1) // mmap.PAGESIZE
    vec = (ctypes.c_ubyte * n)()
    addr = ctypes.c_void_p(rows.array.ctypes.data)
    assert libc.mincore(addr, ctypes.c_size_t(rows.array.nbytes), vec) == 0
    return sum(v & 1 for v in vec)


def test_decided_score_rows_are_given_back() -> None:
    rows = ScoreRows(64, 4096)  # 16 KB a row
    rows.array[:32] = 1.0
    assert _resident_pages(rows) >= 32 * 4
    rows.release(30)
    assert _resident_pages(rows) <= 2 * 4 + 1  # rows 30 and 31 (and the page they share) stay
    assert float(rows.array[31, 0]) == 1.0 and float(rows.array[0, 0]) == 0.0  # given back: zero again
    rows.reset()
    assert _resident_pages(rows) == 0


@pytest.mark.slow
@pytest.mark.usefixtures("packaged_model")
def test_drafted_extractions_keep_their_items() -> None:
    from egomem.llm.local import LocalLLMProvider
    from egomem.memory.extractor import MemoryExtractor
    from egomem.memory.items import SessionText, Turn

    said = "Hi, I'm Nadia. I work as a vet at the animal clinic, and my sister Leila lives in Leeds."
    turns = [Turn(speaker="user", text=said), Turn(speaker="assistant", text="Nice to meet you.")]
    session = SessionText(episode_id="d", start=0.0, end=30.0, date="3 March 2025", turns=turns)
    drafted = LocalLLMProvider("qwen2.5-coder-1.5b", draft_tokens=8)
    items = MemoryExtractor(drafted).extract(session).items
    kinds = {(it.kind, it.text.lower()) for it in items}
    assert ("name", "nadia") in kinds
    assert any(k == "fact" and "vet" in t for k, t in kinds)
    assert any(it.kind == "relation" and it.person == "Leila" for it in items)
    u = drafted.usage
    # The drafted batches are generation, not prompt: fewer prompt tokens computed than sent.
    assert 0 < u.prompt_tokens_evaluated <= u.prompt_tokens
    assert u.prompt_eval_seconds > 0 and u.decode_seconds > 0


def test_drafts_with_the_ram_cache_are_refused_before_any_model_loads() -> None:
    from egomem.errors import ConfigError
    from egomem.llm.local import LocalLLMProvider

    with pytest.raises(ConfigError, match=r"draft_tokens needs llm\.prefix_cache"):
        LocalLLMProvider("/nonexistent/model.gguf", draft_tokens=4, prefix_cache="ram")
