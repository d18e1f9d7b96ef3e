"""Scripts from the conversation benchmark's generator: valid, consistent with the
scenario's gold, and buildable."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from egomem.cli.main import main
from egomem_eval.convo.scenario import generate
from egomem_training.data.build import BuildConfig, build
from egomem_training.data.from_convo import script_from_convo
from egomem_training.data.script import load_script


def test_day2_sessions_become_sessions_with_gold_level2() -> None:
    seeds = [0, 1, 2, 3]
    script = script_from_convo("dev", seeds)
    scenarios = [generate("dev", s) for s in seeds]
    assert len(script.sessions) == sum(1 for sc in scenarios for s in sc.sessions if s.day == 2)
    assert len(script.users) == sum(len(sc.people) for sc in scenarios)
    level2 = [(s, t) for s in script.sessions for t in s.turns if t.level == 2]
    assert len(level2) == sum(len(sc.level2) for sc in scenarios)
    for session, turn in level2:
        user = script.user(session.user)
        assert turn.retr is not None
        (relation,) = [r for r in user.social if r.relation == turn.retr.relations[0] and turn.facts[0] in r.facts]
        assert turn.facts[0] in turn.assistant and relation.name in turn.assistant  # the answer states the fact
        assert turn.retr.keywords and relation.relation not in turn.retr.keywords
    for s in script.sessions:
        assert "generator (dev:" in s.source and "by rules" in s.source


def test_from_convo_command_writes_a_loadable_jsonl(tmp_path: Path) -> None:
    out = tmp_path / "convo.jsonl"
    main(["data", "from-convo", "--seeds", "5,6", "--out", str(out)])
    assert load_script(out) == script_from_convo("dev", [5, 6])
    assert all("session" in json.loads(x) or "user" in json.loads(x) for x in out.read_text().splitlines())


def test_a_converted_script_builds(tmp_path: Path) -> None:
    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed")
    script = script_from_convo("dev", [0])
    cfg = BuildConfig(
        assistant_voice="espeak-ng",
        user_engines=("espeak-ng",),
        sessions_per_stream=len(script.sessions),
        picture=False,
        audio_tokenizer="logmel",
    )
    manifest, _ = build(script, tmp_path / "out", cfg)
    n2 = sum(t.level == 2 for s in script.sessions for t in s.turns)
    assert manifest["samples"] == {
        "level1": len(script.sessions),
        "level2_query": n2,
        "level2_answer": n2,
        "trigger": 1,
    }
