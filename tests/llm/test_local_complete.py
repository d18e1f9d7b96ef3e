"""`LocalLLMProvider.complete` (free text, for the cascaded dialog model on the local model):
plumbing with a stand-in for llama.cpp, no model loaded."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from egomem.llm.base import LLMError, Usage
from egomem.llm.local import LocalLLMProvider


class _LlamaMock:
    """Plumbing only: records the call, returns a fixed completion or raises."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.kwargs: dict[str, Any] = {}
        self.cache: object | None = object()
        self.n_threads = 2  # the threads the provider below runs with: no switch to make

    def set_cache(self, cache: object | None) -> None:
        self.cache = cache

    def create_chat_completion(self, **kwargs: Any) -> dict[str, Any]:
        self.kwargs = kwargs
        if self.fail:
            raise ValueError("Requested tokens exceed context window")
        return {"choices": [{"message": {"content": "Hi Ana."}}], "usage": {"prompt_tokens": 9, "completion_tokens": 2}}


def _provider(llm: _LlamaMock) -> LocalLLMProvider:
    p = object.__new__(LocalLLMProvider)
    p.usage, p.max_tokens, p._llm, p._lock, p._drafts = Usage(), 64, llm, threading.Lock(), None
    p.n_threads = 2
    return p


def test_complete_passes_stop_and_counts_usage() -> None:
    llm = _LlamaMock()
    p = _provider(llm)
    reply = p.complete([{"role": "user", "content": "hello"}], stop=["<answer>"], max_tokens=20)
    assert reply.content == "Hi Ana." and (reply.prompt_tokens, reply.completion_tokens) == (9, 2)
    assert llm.kwargs["stop"] == ["<answer>"] and llm.kwargs["max_tokens"] == 20 and llm.kwargs["temperature"] == 0.0
    assert "response_format" not in llm.kwargs  # free text: no grammar
    assert p.usage.calls == 1 and p.usage.prompt_tokens == 9


def test_a_failing_completion_is_an_llm_error() -> None:
    p = _provider(_LlamaMock(fail=True))
    with pytest.raises(LLMError, match="local model failed"):
        p.complete([{"role": "user", "content": "hello"}])
    assert p.usage.failures == 1


def test_drop_prefix_cache_clears_the_models_ram_cache() -> None:
    llm = _LlamaMock()
    _provider(llm).drop_prefix_cache()
    assert llm.cache is None
