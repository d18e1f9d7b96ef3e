"""`egomem memorize` then `egomem ask` on a 10-minute synthetic recording, through the CLI
with the rules backend (no LLM).

The recording is `bench memorize`'s (bench realtime's stream: LibriSpeech speakers each
with an LFW face, visiting and coming back), written by the bench's own writer with its
script; the questions are the bench's (bench/_recording_questions.py), a few of each kind,
and their evidence is checked against the script: what was said about a word comes from
an episode while it was said, a time of day keeps to that minute.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from egomem.bench._recording_questions import people_of, questions, score
from egomem.bench.memorize import ORIGIN, write_recording
from egomem.config import load_config
from egomem.retrieval.ask_types import AskResult
from egomem.runtime.memorize import clip_spans
from egomem.store import open_store

MINUTES = 10.0


@pytest.mark.slow
def test_memorize_then_ask_on_a_ten_minute_recording(
    tmp_path: Path, shared_data: Callable[[str], Path], egomem: Callable[..., CompletedProcess[str]]
) -> None:
    shared_data("speech_librispeech_test_other_10spk")
    shared_data("faces_lfw_subset_10x10")
    wav, lines = write_recording(tmp_path, MINUTES, shared_data("."))
    data = tmp_path / "data"
    start = datetime.fromtimestamp(ORIGIN, UTC).isoformat()
    report = tmp_path / "memorize.json"
    r = egomem("memorize", str(wav), "--start", start, "--json", str(report), data_dir=data)
    assert r.returncode == 0, r.stderr
    done = json.loads(report.read_text())
    assert done["duration_s"] >= MINUTES * 60
    assert [c["index"] for c in done["clips"]] == list(range(len(clip_spans(done["duration_s"], 30.0))))
    # A session cut at a clip boundary may hold no words: the defined "empty session", no other failure.
    assert {why for c in done["clips"] for why in c["failed_sessions"]} <= {"empty session"}

    qs = questions(lines, ORIGIN)
    picked = [q for kind in ("said", "who", "when") for q in [x for x in qs if x.kind == kind][:4]]
    picked += [q for q in qs if q.kind == "at_time"][3:5]
    results = []
    for q in picked:
        r = egomem("ask", q.text, "--no-llm", "--json", data_dir=data)
        assert r.returncode == 0, r.stderr
        res = AskResult.model_validate_json(r.stdout)
        assert not res.empty and res.answered_by == "evidence" and res.evidence
        assert res.evidence[0].quote in res.answer
        for item in res.evidence:  # every item is sourced and dated inside the recording
            assert item.episode_id and item.time is not None
            assert ORIGIN - 1 <= item.time <= ORIGIN + done["duration_s"]
        results.append(res)

    store = open_store(load_config(data_dir=data))
    try:
        episodes = store.list_episodes()
        scores = score(picked, results, episodes, people_of(lines, episodes, ORIGIN), ORIGIN)
        by_id = {ep.id: ep for ep in episodes}
    finally:
        store.close()
    for q, res in zip(picked, results, strict=True):
        if q.kind == "at_time":  # the window is that minute: only conversations overlapping it
            assert res.time is not None and res.time.text.startswith("at ")
            assert res.time.since is not None and res.time.until is not None
            assert all(by_id[e.episode_id or ""].end >= res.time.since for e in res.evidence)
            assert all(by_id[e.episode_id or ""].start <= res.time.until for e in res.evidence)
    assert scores["at_time"]["hit_at_k"] == 1.0
    # The words are the script's, not the recogniser's: most, not all, are found.
    assert scores["said"]["hit_at_k"] >= 0.5 and scores["when"]["hit_at_k"] >= 0.5
    assert scores["who"]["hit_at_k"] >= 0.5
