"""A real recording through the product's run path (what `egomem run` runs, as `bench real` runs
it): no stored memory has the assistant as its subject. The restaurant clip (one man talking in
restaurant babble, ../shared/data/visualvoice_noisy_restaurant), whose session holds the robot's
real lines ("Hello! I don't know your name yet. What's your name?"):

- with the rules extractor (which never wrote such a memory, before the fix either);
- with a chat model that answers what the default local model answered on real clips (a plumbing
  mock: the prompt is rendered and the answer parsed by the product); before the post-check its
  summary "the assistant asked the user for their name, but the user did not respond." was stored;
- marked slow, with the default local model itself."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from egomem.bench._real_data import load_recordings
from egomem.bench.real import _config, run_one
from egomem.llm.base import ChatProvider, ChatReply
from egomem.memory.assistant_subject import about_assistant
from egomem.memory.items import ASSISTANT_LABEL
from egomem.memory.rules_provider import RulesProvider
from egomem.runtime.build import Models, Services, build_agent, memory_manager
from egomem.runtime.timeline import Timeline
from egomem.store.sqlite import SQLiteStore
from egomem.stream.sources import read_recording, replay


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


class RecordedBadAnswer(ChatProvider):
    """Plumbing mock of the local model: answers `extract` with the summary the default model wrote
    from real clips (issue 21), whatever the session; `update` is decided by the rules."""

    name = "recorded-bad-answer"
    SUMMARY = "the assistant asked the user for their name, but the user did not respond."

    def __init__(self) -> None:
        super().__init__(prompt_version=2)
        self.prompts: list[str] = []
        self.rules = RulesProvider()

    def chat(self, messages: list[dict[str, str]], json_schema: dict[str, Any], schema_name: str) -> ChatReply:
        self.prompts.append(messages[-1]["content"])
        return ChatReply(json.dumps({"items": [{"kind": "summary", "text": self.SUMMARY, "source_text": "x"}]}))

    def run(self, task: str, payload: Any, schema: Any) -> Any:
        return self.rules.run(task, payload, schema) if task == "update" else super().run(task, payload, schema)


def test_a_models_summary_of_the_assistant_is_not_stored_from_a_real_recording(
    tmp_path: Path, shared_data: Callable[[str], Path]
) -> None:
    clip = shared_data("visualvoice_noisy_restaurant") / "noisy_restaurant.mp4"
    cfg = _config(tmp_path, "rules")
    store = SQLiteStore(tmp_path / "memory.db")
    try:
        timeline = Timeline()
        models = Models(cfg)
        model = RecordedBadAnswer()
        # The manager the runtime builds for a language model (rules as its fallback and supplement).
        manager = memory_manager(cfg.memory, store, model, models.text)
        agent = build_agent(Services(cfg, store, models, manager=manager), timeline)
        agent.run(replay(read_recording(clip, fps=cfg.runtime.video_fps)), lockstep=True)
        assert model.prompts, "no session reached the extractor"
        # The robot's own lines reached the model marked as the robot's.
        assert ASSISTANT_LABEL in model.prompts[0] and "name" in model.prompts[0]
        episodes = [e for e in store.list_episodes() if e.status.startswith("done")]
        assert episodes and all(e.summary != RecordedBadAnswer.SUMMARY for e in episodes)
        texts = [f.text for u in store.list_users() for f in store.list_facts(u.id, include_history=True)]
        assert [t for t in [*texts, *(e.summary for e in episodes)] if about_assistant(t)] == []
        # The person's session still has a summary (the rules', about what he said), and the drop is on record.
        assert all(e.summary for e in episodes)
        dropped = [e.fields["text"] for e in timeline.of_type("memory") if e.fields.get("op") == "DROPPED"]
        assert dropped and RecordedBadAnswer.SUMMARY in dropped[0]
    finally:
        store.close()
