"""The main job end to end: the EgoMem scenario from audio and video (real models, no mocks).

Day 1 Emily and John are seen and heard; day 2 Emily is recognised, greeted by name,
asks whether any colleague plays tennis and is answered from Level-2 retrieval. The
script is ordinary phrasing, so memory is checked by content words, not exact strings
(the default extractor is a language model; the rules are its fallback).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from egomem.config import load_config
from egomem.runtime.demo import run_demo


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    cfg = load_config(data_dir=tmp_path_factory.mktemp("demo"), environ={})
    lines: list[str] = []
    return {**run_demo(cfg, lines.append), "printed": lines, "data_dir": str(cfg.data_dir)}


def _events(demo: dict[str, Any], day: str, type_: str) -> list[dict[str, Any]]:
    return [e for e in demo["events"] if e["day"] == day and e["type"] == type_]


def test_day1_two_sessions_two_new_people(demo: dict[str, Any]) -> None:
    sessions = _events(demo, "day1", "session")
    assert len(sessions) == 2
    assert sessions[0]["start"] < 6 and 26 < sessions[1]["start"] < 32  # Emily from ~3 s, John from ~28 s
    heard = " | ".join(e["text"] for e in _events(demo, "day1", "heard")).lower()
    assert "i'm emily" in heard and "john here" in heard
    # Each name went to its own speaker at once, not to whoever Level 1 still showed.
    named = {e["text"].split(" (")[0]: e["user"] for e in demo["events"] if e["type"] == "memory" and e["op"] == "NAME"}
    assert set(named) == {"Emily", "John"} and named["Emily"] != named["John"]


def _said(demo: dict[str, Any], day: str) -> list[str]:
    return [e["text"] for e in _events(demo, day, "assistant")]


def test_day2_recognised_greeted_and_answered_from_level2(demo: dict[str, Any]) -> None:
    said = _said(demo, "day2")
    greeting = next(s for s in said if s.startswith("Hi "))
    assert greeting.startswith("Hi Emily, good to see you again!")
    query = _events(demo, "day2", "retrieval")
    assert query and query[0]["relations"] == "colleague" and "tennis" in query[0]["keywords"]
    level2 = [e for e in _events(demo, "day2", "memchunk") if e["level"] == 2 and e["text"]]
    assert level2 and "John" in level2[0]["text"] and "tennis" in level2[0]["text"]
    answer = next(s for s in said if s.startswith("Yes, your colleague John"))
    assert "tennis" in answer
    # The greeting came from identity (face/voice), before she said anything about herself.
    first_l1 = next(e for e in _events(demo, "day2", "memchunk") if e["level"] == 1 and e["text"])
    assert first_l1["text"].startswith("Current user: Emily") and first_l1["time"] <= 8.0


def _has(facts: set[str], *words: str) -> bool:
    return any(all(w in f.lower() for w in words) for f in facts)


def test_final_memory(demo: dict[str, Any]) -> None:
    people = {u["name"]: u for u in demo["memory"]}
    assert set(people) == {"Emily", "John"}
    emily, john = people["Emily"], people["John"]
    emily_facts = {f["text"] for f in emily["facts"] if f["kind"] != "summary"}
    assert _has(emily_facts, "nurse") and _has(emily_facts, "hik") and _has(emily_facts, "paris")
    assert _has(emily_facts, "learn", "tennis")
    # She only said she would like to learn it: a plan, never a liking of tennis (issue 27).
    assert not [f["text"] for f in emily["facts"] if f["kind"] == "preference" and "tennis" in f["text"].lower()]
    assert not _has(emily_facts, "london")  # superseded on day 2 by the move, not kept beside it
    assert _has({f["text"] for f in john["facts"]}, "tennis")
    assert {"relation": "colleague", "person": "Emily"} in john["relations"]
    assert emily["face_keys"] >= 1 and emily["voice_keys"] >= 1
    assert john["face_keys"] >= 1 and john["voice_keys"] >= 1
    assert emily["episodes"] == 2 and john["episodes"] == 1
    # Stored on the wall clock, not in stream seconds.
    year_2020 = 1_577_836_800.0
    assert all(f["valid_from"] > year_2020 for u in demo["memory"] for f in u["facts"])
    assert emily["last_seen"] is not None and emily["last_seen"] > year_2020
    ops = [e for e in demo["events"] if e["type"] == "memory"]
    assert all(e["op"] != "FAILED" for e in ops)
    assert any(e["day"] == "day2" and e["op"] == "UPDATE" and "paris" in e["text"].lower() for e in ops)


def test_printed_timeline_is_readable(demo: dict[str, Any]) -> None:
    text = "\n".join(demo["printed"])
    assert "== day1" in text and "== day2" in text and "== memory after both days ==" in text
    assert 'agent    "Yes, your colleague John' in text


def test_conversation_recording_has_both_voices(demo: dict[str, Any]) -> None:
    """The assistant's lines are real speech on the speaking channel (right), the user on the left."""
    import soundfile as sf

    from egomem.perception.vad import SileroVAD

    wav = Path(demo["data_dir"]) / "demo" / "day2-conversation.wav"
    audio, rate = sf.read(str(wav), dtype="float32")
    assert rate == 16_000 and audio.ndim == 2 and audio.shape[1] == 2
    vad = SileroVAD()
    user_s = sum(s.duration for s in vad.segments(audio[:, 0]))
    assistant_s = sum(s.duration for s in vad.segments(audio[:, 1]))
    assert user_s > 5.0 and assistant_s > 3.0  # a tone would give no speech at all


def test_demo_json_round_trip(tmp_path: Path, demo: dict[str, Any]) -> None:
    import json

    from egomem.runtime.demo import write_json

    write_json(tmp_path / "d.json", {"events": demo["events"], "memory": demo["memory"]})
    back = json.loads((tmp_path / "d.json").read_text())
    assert {"time", "type", "day"} <= set(back["events"][0]) and back["memory"] == demo["memory"]
