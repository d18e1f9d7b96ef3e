"""The extraction-cost settings with the real packaged model (slow; skipped where the model is
not assembled): a prefix evaluated once is reused by the next call of the same task, and the
short schema writes fewer tokens for the same items."""

from __future__ import annotations

import pytest

from egomem.llm.local import LocalLLMProvider
from egomem.memory.extractor import MemoryExtractor
from egomem.memory.items import SessionText, Turn

pytestmark = pytest.mark.slow

MODEL = "qwen2.5-coder-1.5b"


def _session(ep: str, said: str) -> SessionText:
    turns = [Turn(speaker="user", text=said), Turn(speaker="assistant", text="Nice to meet you.")]
    return SessionText(episode_id=ep, start=0.0, end=30.0, date="3 March 2025", turns=turns)


@pytest.mark.usefixtures("packaged_model")
def test_the_system_prompt_is_evaluated_once_for_consecutive_extractions() -> None:
    p = LocalLLMProvider(MODEL, prefix_cache="context")
    MemoryExtractor(p).extract(_session("a", "Hi, I'm Nadia. I work as a vet."))
    sent, evaluated = p.usage.prompt_tokens, p.usage.prompt_tokens_evaluated
    MemoryExtractor(p).extract(_session("b", "Hello, I'm Omar. I live in Leeds."))
    second_sent = p.usage.prompt_tokens - sent
    second_evaluated = p.usage.prompt_tokens_evaluated - evaluated
    assert second_evaluated < second_sent / 3  # the system prompt (most of it) was not recomputed


@pytest.mark.usefixtures("packaged_model")
def test_short_schema_writes_fewer_tokens_for_the_same_items() -> None:
    session = _session("c", "Hi, I'm Nadia. I work as a vet at the animal clinic.")
    full = LocalLLMProvider(MODEL)
    short = LocalLLMProvider(MODEL)
    a = MemoryExtractor(full).extract(session)
    b = MemoryExtractor(short, schema="short").extract(session)
    for result in (a, b):
        kinds = {(it.kind, it.text.lower()) for it in result.items}
        assert ("name", "nadia") in kinds and any(k == "fact" and "vet" in t for k, t in kinds)
    assert short.usage.completion_tokens < full.usage.completion_tokens


@pytest.mark.usefixtures("packaged_model")
def test_the_models_seconds_split_into_prompt_decode_and_the_rest() -> None:
    p = LocalLLMProvider(MODEL, prefix_cache="off")
    MemoryExtractor(p).extract(_session("d", "Hi, I'm Nadia. I work as a vet."))
    u = p.usage
    # llama.cpp's timers: both parts ran, and together they are part of the call's wall time, not more.
    assert u.prompt_eval_seconds > 0 and u.decode_seconds > 0
    assert u.prompt_eval_seconds + u.decode_seconds <= u.seconds
