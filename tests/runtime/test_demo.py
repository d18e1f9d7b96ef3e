"""The main job end to end: the EgoMem scenario from audio and video (real models, no mocks).

Day 1 Emily and John are seen and heard; day 2 Emily is recognised, greeted by name,
asks about colleagues who love tennis and is answered from Level-2 retrieval.
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
    return {**run_demo(cfg, lines.append), "printed": lines}


def _events(demo: dict[str, Any], day: str, type_: str) -> list[dict[str, Any]]:
    return [e for e in demo["events"] if e["day"] == day and e["type"] == type_]


def test_day1_two_sessions_two_new_people(demo: dict[str, Any]) -> None:
    sessions = _events(demo, "day1", "session")
    assert len(sessions) == 2
    assert sessions[0]["start"] < 6 and 22 < sessions[1]["start"] < 27  # Emily from ~3 s, John from ~25 s
    heard = " | ".join(e["text"] for e in _events(demo, "day1", "heard"))
    assert "my name is emily" in heard and "my name is john" in heard


def test_day2_recognised_greeted_and_answered_from_level2(demo: dict[str, Any]) -> None:
    said = [e["text"] for e in _events(demo, "day2", "assistant")]
    greeting = next(s for s in said if s.startswith("Hi "))
    assert greeting.startswith("Hi Emily, good to see you again! Last time you told me you")
    query = _events(demo, "day2", "retrieval")
    assert query and query[0]["relations"] == "colleague" and "tennis" in query[0]["keywords"]
    level2 = [e for e in _events(demo, "day2", "memchunk") if e["level"] == 2 and e["text"]]
    assert level2 and "John" in level2[0]["text"] and "tennis" in level2[0]["text"]
    assert "Yes, your colleague John loves tennis." in said
    # The greeting came from identity (face/voice), before she said anything about herself.
    first_l1 = next(e for e in _events(demo, "day2", "memchunk") if e["level"] == 1 and e["text"])
    assert first_l1["text"].startswith("Current user: Emily") and first_l1["time"] <= 8.0


def test_final_memory(demo: dict[str, Any]) -> None:
    people = {u["name"]: u for u in demo["memory"]}
    assert set(people) == {"Emily", "John"}
    emily, john = people["Emily"], people["John"]
    emily_facts = {f["text"] for f in emily["facts"] if f["kind"] != "summary"}
    assert {"works as a nurse", "loves hiking", "wants to learn tennis", "lives in paris"} <= emily_facts
    assert "lives in london" not in emily_facts  # superseded on day 2, not duplicated
    assert "loves tennis" in {f["text"] for f in john["facts"]}
    assert {"relation": "colleague", "person": "Emily"} in john["relations"]
    assert emily["face_keys"] >= 1 and emily["voice_keys"] >= 1
    assert john["face_keys"] >= 1 and john["voice_keys"] >= 1  # voice learned after a face match
    assert emily["episodes"] == 2 and john["episodes"] == 1
    # Stored on the wall clock, not in stream seconds.
    year_2020 = 1_577_836_800.0
    assert all(f["valid_from"] > year_2020 for u in demo["memory"] for f in u["facts"])
    assert emily["last_seen"] is not None and emily["last_seen"] > year_2020
    ops = [e for e in demo["events"] if e["type"] == "memory"]
    assert all(e["op"] != "FAILED" for e in ops)
    assert any(e["day"] == "day2" and e["op"] == "ADD" and e["text"] == "wants to learn tennis" for e in ops)
    assert any(e["day"] == "day2" and e["op"] == "UPDATE" and e["text"] == "lives in paris" for e in ops)


def test_printed_timeline_is_readable(demo: dict[str, Any]) -> None:
    text = "\n".join(demo["printed"])
    assert "== day1" in text and "== day2" in text and "== memory after both days ==" in text
    assert 'agent    "Yes, your colleague John loves tennis."' in text


def test_demo_json_round_trip(tmp_path: Path, demo: dict[str, Any]) -> None:
    import json

    from egomem.runtime.demo import write_json

    write_json(tmp_path / "d.json", {"events": demo["events"], "memory": demo["memory"]})
    back = json.loads((tmp_path / "d.json").read_text())
    assert {"time", "type", "day"} <= set(back["events"][0]) and back["memory"] == demo["memory"]
