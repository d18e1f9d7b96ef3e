"""A real recording through the product's run path (what `egomem run` runs, as `bench real` runs
it): no stored memory has the assistant as its subject. The restaurant clip (one man talking in
restaurant babble, ../shared/data/visualvoice_noisy_restaurant) with the rules extractor, and,
marked slow, with the default local model (the extractor that wrote "Assistant talked about their
job and their name." from real clips before the post-check)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from egomem.bench._real_data import load_recordings
from egomem.bench.real import _config, run_one
from egomem.memory.assistant_subject import about_assistant
from egomem.runtime.build import Models
from egomem.store.sqlite import SQLiteStore


def _run_restaurant(tmp_path: Path, shared_data: Callable[[str], Path], llm: str | None) -> tuple[dict, SQLiteStore]:
    root = shared_data("visualvoice_noisy_restaurant").parent
    rec = next(r for r in load_recordings(root) if r.id == "restaurant")
    cfg = _config(tmp_path, llm)
    store = SQLiteStore(tmp_path / "memory.db")
    scores, _ = run_one(rec, Models(cfg).load_all(), cfg, store)
    return scores, store


def _assert_about_the_person_only(scores: dict, store: SQLiteStore) -> None:
    episodes = [e for e in store.list_episodes() if e.status.startswith("done")]
    # Not vacuous: the man was heard and remembered, and the assistant spoke to him.
    assert episodes and any(e.user_transcript.strip() for e in episodes)
    assert any(e.assistant_transcript.strip() for e in episodes)
    texts = [f.text for u in store.list_users() for f in store.list_facts(u.id, include_history=True)]
    texts += [e.summary for e in episodes if e.summary]
    assert texts  # at least a summary of what he said
    assert [t for t in texts if about_assistant(t)] == []
    assert scores["assistant_memories"] == 0


def test_no_memory_about_the_assistant_from_a_real_recording_rules(
    tmp_path: Path, shared_data: Callable[[str], Path]
) -> None:
    scores, store = _run_restaurant(tmp_path, shared_data, "rules")
    try:
        _assert_about_the_person_only(scores, store)
    finally:
        store.close()


@pytest.mark.slow
def test_no_memory_about_the_assistant_from_a_real_recording_local_model(
    tmp_path: Path, shared_data: Callable[[str], Path]
) -> None:
    pytest.importorskip("llama_cpp", reason="the local model's runtime (llama-cpp-python) is not installed")
    scores, store = _run_restaurant(tmp_path, shared_data, None)  # the default configuration
    try:
        _assert_about_the_person_only(scores, store)
    finally:
        store.close()
