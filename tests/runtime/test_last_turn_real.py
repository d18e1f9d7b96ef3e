"""The last turn of a real recording is not dropped (issue 21): the pyannote sample phone call (30 s,
Diane and Sheila give their names and where they live and are from) through what `egomem run` runs
(`bench real`'s `run_one`: read_recording + replay + build_agent + EgoMem.run, lockstep), the rules
extractor for speed. Its one VAD turn (~6.8-30 s, nobody pauses for 0.8 s) is still open when the
trigger ends the session (~13 s); before the fix that session was closed "empty" and the turn's
transcript, heard at 30 s, reached no session: 8 of 8 reference turns dropped, nothing remembered.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from egomem.bench._real_data import default_annotation, parse_recording
from egomem.bench.real import run_one
from egomem.config import load_config
from egomem.runtime.build import Models
from egomem.runtime.memorize import Memorizer
from egomem.store.sqlite import SQLiteStore

NAMES = ("diane", "sheila")


@pytest.mark.slow
def test_the_phone_call_drops_no_turn_and_remembers_a_name(tmp_path: Path, shared_data: Callable[[str], Path]) -> None:
    root = shared_data("speech_pyannote_diarization").parent
    entry = next(r for r in json.loads(default_annotation().read_text())["recordings"] if r["id"] == "call-sample")
    rec = parse_recording(entry, root)
    cfg = load_config(data_dir=tmp_path, environ={"EGOMEM_LLM__PROVIDER": "rules"})
    store = SQLiteStore(tmp_path / "memory.db")
    try:
        scores, ran = run_one(rec, Models(cfg), cfg, store)
        assert ran == "RulesProvider"
        assert scores["ref_turns"] == 8
        assert scores["dropped_turns"] == 0, scores["dropped"]
        assert [o for o in scores["turns"] if not o[3]] == []  # every transcribed turn kept in a session
        assert not any(ep.status.startswith("failed") for ep in store.list_episodes()), store.list_episodes()
        remembered = " ".join(
            [u.name or "" for u in store.list_users()]
            + [f.text for u in store.list_users() for f in store.list_facts(u.id)]
        ).lower()
        assert any(n in remembered for n in NAMES), remembered
    finally:
        store.close()


@pytest.mark.slow
def test_memorize_keeps_the_turn_open_at_the_end_of_a_clip(tmp_path: Path, shared_data: Callable[[str], Path]) -> None:
    """`egomem memorize`, default 30 s clips: the call is one clip whose end closes the open turn;
    before the fix its only session was stored as failed ("empty session") and nothing was kept."""
    wav = shared_data("speech_pyannote_diarization") / "sample" / "sample.wav"
    cfg = load_config(data_dir=tmp_path, environ={"EGOMEM_LLM__PROVIDER": "rules"})
    store = SQLiteStore(tmp_path / "memory.db")
    try:
        done = Memorizer(cfg, store, Models(cfg)).run(wav, origin=0.0)
        assert [c.failed_sessions for c in done.clips] == [[]]
        assert done.clips[0].sessions >= 1 and done.clips[0].memory_ops >= 1
        said = " ".join(e.user_transcript for e in store.list_episodes()).lower()
        assert any(n in said for n in NAMES) and "chicago" in said, said
    finally:
        store.close()
