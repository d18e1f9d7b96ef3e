"""`egomem eval dialog`'s `product` condition: the answerer's MemChunks come from a store the product
filled (its memory manager, rules extractor: no model) and the product's retrieval, never from the
script's profile or gold facts. The judge is a named mock (plumbing only)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.training.test_data_from_locomo import _locomo
from tests.training.test_eval_dialog import MockJudge

from egomem.errors import InputError
from egomem_eval.locomo import load_locomo
from egomem_training.data.from_locomo import LocomoOptions, script_from_locomo
from egomem_training.data.script import write_jsonl
from egomem_training.eval.cli_entry import eval_script, judge_family_note, run
from egomem_training.eval.dialog import select_turns
from egomem_training.eval.models import family, parse_spec
from egomem_training.eval.product_memory import is_chat

# Maria told the robot where she works and about her son; the dog is only in the script's profile.
TINY: dict[str, Any] = {
    "users": [
        {
            "id": "u-maria",
            "name": "Maria",
            "profile": {"facts": ["Works as a nurse at the city hospital", "Has a dog called Biscuit"]},
            "social": [{"name": "Tom", "relation": "son", "facts": ["Tom is training for the city marathon"]}],
        }
    ],
    "sessions": [
        {
            "id": "maria-chat",
            "user": "u-maria",
            "turns": [
                {"user": "Hello, my name is Maria.", "assistant": "Nice to meet you, Maria."},
                {"user": "I work as a nurse at the city hospital.", "assistant": "That must be busy."},
                {"user": "My son Tom is training for the city marathon.", "assistant": "Good luck to him!"},
            ],
        },
        {
            "id": "maria-q",
            "user": "u-maria",
            "turns": [
                {"user": "Where do I work?", "assistant": "You work as a nurse at the city hospital.", "level": 1},
                {
                    "user": "How is my son doing?",
                    "assistant": "Tom is training for the city marathon.",
                    "level": 2,
                    "retr": {"relations": ["son"], "keywords": ["training"]},
                    "facts": ["Tom is training for the city marathon"],
                },
            ],
        },
    ],
}


def _opts(scripts: Path, **kw: Any) -> dict[str, Any]:
    return {
        "scripts": scripts,
        "responder": "template",
        "answerer": None,
        "judge": "local:qwen2.5-coder-1.5b",
        "levels": "1,2",
        "conditions": "product,clean",
        "per_level": None,
        "seed": 0,
        "json_path": None,
        "llm": "rules",
        **kw,
    }


def _seen(metrics: dict[str, Any], condition: str, level: int) -> dict[str, Any]:
    return next(t for t in metrics["turns"] if t["condition"] == condition and t["level"] == level)


def test_what_was_said_reaches_the_answerer_through_the_product_and_what_was_not_does_not(tmp_path: Path) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY))
    m = run(_opts(path), judge_provider=MockJudge())["metrics"]
    assert m["extractor"] == "rules" and set(m["table"]) == {
        f"level{lv}/{c}" for lv in (1, 2) for c in ("product", "clean")
    }
    product_l1 = _seen(m, "product", 1)["level1_memory"]
    # The store's profile of the person the robot met: the name and the job she said, in the product's layout.
    assert product_l1.startswith("Current user: Maria") and "nurse" in product_l1
    # The dog was never said: only the oracle has it.
    assert "Biscuit" not in product_l1 and "Biscuit" in _seen(m, "clean", 1)["level1_memory"]
    # The template responder asks a lookup for "my son": the product's Level-2 retrieval answers it from the
    # person the product linked as her son (the oracle's chunk is the gold fact instead).
    l2 = _seen(m, "product", 2)
    assert l2["queried"] and "Tom" in l2["level2_memory"]
    assert _seen(m, "clean", 2)["level2_memory"] == "- Tom is training for the city marathon"
    assert m["remembered"]["u-maria"]["sessions"] == 1 and m["remembered"]["u-maria"]["known_as"] == "Maria"


def test_a_script_with_no_chat_before_its_questions_gives_the_answerer_nothing(tmp_path: Path) -> None:
    script = {**TINY, "sessions": TINY["sessions"][1:]}
    path = tmp_path / "no-chat.json"
    path.write_text(json.dumps(script))
    m = run(_opts(path, conditions="product"), judge_provider=MockJudge())["metrics"]
    assert all(t["level1_memory"] == "" and t["level2_memory"] == "" for t in m["turns"])
    assert m["remembered"]["u-maria"]["sessions"] == 0


def test_a_heard_conversation_gives_each_speaker_their_own_words(tmp_path: Path) -> None:
    # LoCoMo's sessions are two people talking (the script names the other speaker): Ana's memory holds
    # what Ana said, not what Ben said, and the session is dated by LoCoMo's date.
    convs, _ = load_locomo(_locomo(tmp_path / "locomo10.json"))
    script = script_from_locomo(convs, LocomoOptions(roles="a"))
    chat = next(s for s in script.sessions if s.other_speaker)
    assert chat.other_speaker == "Ben" and chat.start is not None
    path = tmp_path / "ana.jsonl"
    write_jsonl(script, path)
    m = run(_opts(path, conditions="product"), judge_provider=MockJudge())["metrics"]
    l1 = m["turns"][0]["level1_memory"]
    assert l1.startswith("Current user: Ana") and "pottery" in l1
    assert "marathon" not in l1 and "Lisbon" not in l1  # Ben's words are Ben's memory
    assert "8 May 2023" in l1  # the summary of the session is dated by LoCoMo's date


def test_the_judge_family_is_named_and_the_same_family_is_a_stated_limitation() -> None:
    assert family(parse_spec("local:qwen2.5-coder-1.5b")) == "qwen"
    assert family(parse_spec("openai:Qwen2.5-72B-Instruct@http://h:8000/v1")) == "qwen"
    assert family(parse_spec("openai:gpt-4o@http://h/v1")) == "gpt"
    same = judge_family_note(parse_spec("local:qwen2.5-coder-1.5b"), parse_spec("local:qwen2.5-coder-0.5b"))
    assert same["judge_same_family"] is True and "answerer's model family (qwen)" in same["judge_limitation"]
    other = judge_family_note(parse_spec("openai:gpt-4o@http://h/v1"), parse_spec("local:qwen2.5-coder-0.5b"))
    assert other["judge_same_family"] is False and "differ in family" in other["judge_limitation"]
    assert judge_family_note(parse_spec("local:qwen2.5-coder-1.5b"), None)["judge_same_family"] is None


def test_the_product_condition_is_the_default(tmp_path: Path) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY))
    opts = _opts(path)
    del opts["conditions"]
    m = run(opts, judge_provider=MockJudge())["metrics"]
    assert {t["condition"] for t in m["turns"]} == {"product"}


@pytest.mark.parametrize("bad", ["oracle", "product,bogus"])
def test_unknown_conditions_are_refused(tmp_path: Path, bad: str) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY))
    with pytest.raises(InputError, match="--conditions"):
        run(_opts(path, conditions=bad), judge_provider=MockJudge())


def test_the_default_scripts_are_built_from_locomo_in_the_data_root(shared_data: Callable[[str], Path]) -> None:
    # No hand-made file: LoCoMo's test conversations conv-44 and conv-47, speaker A the user, as the
    # earlier runs' out/eval/locomo_test_2users.jsonl was made (`egomem data convert locomo`).
    script, label = eval_script({"data": shared_data("locomo")})
    assert [u.id for u in script.users] == ["locomo-conv-44-audrey", "locomo-conv-47-james"]
    assert "conv-44,conv-47" in label
    chat = [s for s in script.sessions if is_chat(s)]
    assert len(chat) == 59 and all(s.other_speaker in ("Andrew", "John") and s.start for s in chat)
    turns = select_turns(script, (1, 2), 5)
    assert [t.level for t in turns].count(1) == 5 and [t.level for t in turns].count(2) == 5
    assert {t.user.id for t in turns} == {u.id for u in script.users}
