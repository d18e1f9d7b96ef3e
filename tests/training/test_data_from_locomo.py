"""Scripts from LoCoMo: a small conversation in LoCoMo's format (written here, not LoCoMo's
text) is loaded by the benchmark's loader, converted, validated by the data-build loader,
and built into samples."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from egomem.cli.main import main
from egomem.llm.base import ChatReply, LLMError
from egomem_eval.locomo import load_locomo
from egomem_training.data.build import BuildConfig, build
from egomem_training.data.from_locomo import LocomoOptions, first_person, llm_writer, script_from_locomo
from egomem_training.data.script import load_script

_TURNS = [
    ("Ana", "D1:1", "Hi Ben! I started pottery classes last week."),
    ("Ben", "D1:2", "Nice, Ana! I ran my first marathon in Lisbon on Sunday."),
    ("Ana", "D1:3", "Wow, how long did it take you?"),
    ("Ben", "D1:4", "Four hours and ten minutes."),
    ("Ana", "D1:5", "My cat Miso knocked over my first vase."),
    ("Ben", "D1:6", "Ha, cats. Talk soon!"),
]


def _locomo(path: Path) -> Path:
    conv = {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": s, "dia_id": d, "text": t} for s, d, t in _TURNS],
    }
    item = {
        "sample_id": "conv-x",
        "conversation": conv,
        "observation": {
            "session_1_observation": {
                "Ana": [["Ana started pottery classes.", "D1:1"], ["Ana has a cat named Miso.", "D1:5"]],
                "Ben": [["Ben ran a marathon in Lisbon.", "D1:2"]],
            }
        },
        "session_summary": {"session_1_summary": "Ana and Ben talked about pottery and a marathon."},
        "qa": [
            {"question": "Where did Ben run a marathon?", "answer": "Lisbon", "evidence": ["D1:2"], "category": 4},
            {"question": "What is the name of Ana's cat?", "answer": "Miso", "evidence": ["D1:5"], "category": 4},
            {"question": "How long did Ben's marathon take?", "answer": "4h10", "evidence": ["D1:4"], "category": 4},
            {"question": "What did she break?", "answer": "A vase", "evidence": ["D1:5"], "category": 4},
            {"question": "Is Ben a pilot?", "adversarial_answer": "yes", "evidence": ["D1:2"], "category": 5},
        ],
    }
    path.write_text(json.dumps([item]), encoding="utf-8")
    return path


def test_each_speaker_plays_the_user_and_questions_become_level1_and_level2(tmp_path: Path) -> None:
    convs, _ = load_locomo(_locomo(tmp_path / "locomo10.json"))
    script = script_from_locomo(convs)
    ana = script.user("locomo-conv-x-ana")
    assert {u.id for u in script.users} == {"locomo-conv-x-ana", "locomo-conv-x-ben"}
    assert ana.social[0].name == "Ben" and ana.social[0].relation == "friend"
    assert ana.profile.facts[0] == "Ana has a cat named Miso. (8 May 2023)"  # a level-1 question's fact comes first
    dialog = next(s for s in script.sessions if s.id == "locomo-conv-x-ana-s1")
    assert dialog.turns[0].user == "Hi Ben! I started pottery classes last week."
    assert dialog.turns[0].assistant.startswith("Nice, Ana!") and all(t.level == 0 for t in dialog.turns)
    asked = [t for s in script.sessions if s.user == ana.id for t in s.turns if t.level]
    by_q = {t.user: t for t in asked}
    l2 = by_q["Where did Ben run a marathon?"]
    assert l2.level == 2 and l2.retr is not None and l2.retr.relations == ["friend"]
    assert "marathon" in l2.retr.keywords and "ben" not in l2.retr.keywords
    assert l2.facts == ["Ben ran a marathon in Lisbon. (8 May 2023)"] and l2.assistant == "Lisbon."
    # No observation for D1:4: the turn itself is the supporting fact.
    assert by_q["How long did Ben's marathon take?"].facts == ["Ben said: Four hours and ten minutes. (8 May 2023)"]
    assert by_q["What is the name of my cat?"].level == 1
    assert "What did she break?" not in by_q  # a pronoun the rewrite cannot place: left out
    assert all("Is Ben a pilot" not in t.user for t in asked)  # category 5 (adversarial) is not used
    assert all("CC BY-NC" in s.source for s in script.sessions)


def test_first_person_rewrites_only_what_it_can() -> None:
    assert first_person("When did Ana see a heron?", "Ana") == "When did I see a heron?"
    assert first_person("Is Ana happy?", "Ana") == "Am I happy?"
    assert first_person("What does Ana do?", "Ana") == "What do I do?"
    assert first_person("What did Ben give Ana?", "Ana") == "What did Ben give me?"
    assert first_person("When did Ana`s mother visit?", "Ana") == "When did my mother visit?"
    assert first_person("What foods that Ana likes?", "Ana") is None  # the verb would need changing
    assert first_person("What did Ben see?", "Ana") is None  # nothing about the asker


def test_converted_script_loads_back_and_builds(tmp_path: Path) -> None:
    out = tmp_path / "locomo.jsonl"
    main(
        ["data", "convert", "locomo", "--split", "all", "--data", str(_locomo(tmp_path / "l.json")), "--out", str(out)]
    )
    script = load_script(out)
    assert script == script_from_locomo(load_locomo(tmp_path / "l.json")[0])
    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed")
    ana_only = script.model_copy(update={"sessions": [s for s in script.sessions if s.user.endswith("-ana")]})
    cfg = BuildConfig(
        assistant_voice="espeak-ng",
        user_engines=("espeak-ng",),
        sessions_per_stream=len(ana_only.sessions),
        picture=False,
        audio_tokenizer="logmel",
    )
    manifest, _ = build(ana_only, tmp_path / "built", cfg)
    n2 = sum(t.level == 2 for s in ana_only.sessions for t in s.turns)
    assert n2 == 2
    assert manifest["samples"] == {
        "level1": len(ana_only.sessions),
        "level2_query": n2,
        "level2_answer": n2,
        "trigger": 1,
    }


class _ScriptedCompleterMock:
    """Plumbing only: returns a fixed line, or fails for one question."""

    def complete(self, messages: list[dict[str, str]], **_: object) -> ChatReply:
        if "cat" in messages[-1]["content"]:
            raise LLMError("local model failed", "test")
        return ChatReply(" You told me it was Lisbon. ")


def test_llm_written_answers_are_labelled_and_a_failure_keeps_the_gold_line(tmp_path: Path) -> None:
    convs, _ = load_locomo(_locomo(tmp_path / "l.json"))
    script = script_from_locomo(
        convs, LocomoOptions(roles="a"), writer=llm_writer(_ScriptedCompleterMock()), writer_name="mock"
    )
    asked = {t.user: t for s in script.sessions for t in s.turns if t.level}
    assert asked["Where did Ben run a marathon?"].assistant == "You told me it was Lisbon."
    assert asked["Where did Ben run a marathon?"].generated_by == "mock"
    assert (
        asked["What is the name of my cat?"].assistant == "Miso."
        and asked["What is the name of my cat?"].generated_by is None
    )
    assert any("generated by mock" in s.source for s in script.sessions)


def test_a_missing_locomo_file_is_one_clear_error(tmp_path: Path) -> None:
    from egomem.errors import InputError

    with pytest.raises(InputError, match="LoCoMo file not found"):
        load_locomo(tmp_path / "nope.json")
