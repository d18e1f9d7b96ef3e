"""The saved state of a task's fixed system prompt is really reused by llama.cpp: with the
real packaged model, a second call whose prompt starts with the same system prompt, after a
call of another task in between, evaluates only the tokens after that prefix (llama.cpp's
own count of evaluated prompt tokens), and its answer is the answer of a fresh process.

Skipped where llama-cpp-python or the model is not installed (`make install` provides both)."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from egomem.errors import ConfigError
from egomem.llm.local import LocalLLMProvider
from egomem.memory.extractor import MemoryExtractor
from egomem.memory.items import SessionText, Turn

pytestmark = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python missing")


def _session(ep: str, text: str) -> SessionText:
    return SessionText(episode_id=ep, start=0.0, end=10.0, date="3 March 2025", turns=[Turn(speaker="user", text=text)])


@pytest.fixture(scope="module")
def provider() -> LocalLLMProvider:
    try:
        return LocalLLMProvider("qwen2.5-coder-1.5b")
    except ConfigError as exc:
        pytest.skip(f"local model not installed: {exc}")


def _evaluated(provider: LocalLLMProvider) -> int:
    """Prompt tokens llama.cpp has evaluated in this context so far (its perf counter)."""
    llama_cpp: Any = importlib.import_module("llama_cpp")
    return int(llama_cpp.llama_perf_context(provider._llm.ctx).n_p_eval)


def test_the_system_prompt_state_is_reused_across_tasks(provider: LocalLLMProvider) -> None:
    extractor = MemoryExtractor(provider)
    extractor.extract(_session("a", "I'm Nadia and I work as a vet."))  # saves the extract prefix
    provider.complete([{"role": "user", "content": "Say hi."}], max_tokens=4)  # another prompt in between
    cached0, before = provider.usage.cached_prompt_tokens, _evaluated(provider)
    prompt0 = provider.usage.prompt_tokens
    first = extractor.extract(_session("b", "My sister Ana lives in Porto."))
    evaluated = _evaluated(provider) - before
    prompt = provider.usage.prompt_tokens - prompt0
    cached = provider.usage.cached_prompt_tokens - cached0
    assert cached > 300  # the extraction instructions
    # llama.cpp evaluated the prompt minus the saved prefix, plus the answer's tokens fed back
    # (each generated token but the last is evaluated as a batch of one, counted apart).
    assert evaluated <= prompt - cached + 1
    # The same session in a fresh context (the state restored from nothing in between): same answer.
    provider.drop_prefix_cache()
    again = extractor.extract(_session("b", "My sister Ana lives in Porto."))
    assert [(i.kind, i.text) for i in again.items] == [(i.kind, i.text) for i in first.items]
