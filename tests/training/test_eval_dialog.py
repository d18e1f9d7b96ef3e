"""`egomem eval dialog`: the plumbing, with named mock judges and a mock completer (no model);
the refusal of a judge that is the answering model; bad input; the intervals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from egomem.cli.main import main
from egomem.dialog.cascaded import CascadedChatModel
from egomem.errors import InputError
from egomem.llm.base import ChatProvider, ChatReply
from egomem_training.data.script import load_script
from egomem_training.eval.cli_entry import run
from egomem_training.eval.dialog import ORACLE, run_eval, select_turns
from egomem_training.eval.models import check_different, parse_spec
from egomem_training.eval.stats import bootstrap_mean, wilson

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "data" / "example_script.json"


class MockJudge(ChatProvider):
    """Plumbing only: answers every judging request with `reply`, and keeps what it was sent."""

    name = "mock-judge"

    def __init__(self, reply: str | None = None) -> None:
        super().__init__()
        self.reply = reply
        self.seen: list[dict[str, Any]] = []

    def chat(self, messages: list[dict[str, str]], json_schema: dict[str, Any], schema_name: str) -> ChatReply:
        self.seen.append(json.loads(messages[-1]["content"]))
        assert schema_name == "JudgeVerdict" and "fact_score" in json_schema["properties"]
        if self.reply is not None:
            return ChatReply(self.reply)
        good = self.seen[-1]["reference_answer"].split()[0] in self.seen[-1]["model_answer"]
        return ChatReply(json.dumps({"fact_score": int(good), "answer_quality": 8 if good else 2}))


class FlakyMockJudge(MockJudge):
    """Plumbing only: every other answer is not JSON."""

    def chat(self, messages: list[dict[str, str]], json_schema: dict[str, Any], schema_name: str) -> ChatReply:
        reply = super().chat(messages, json_schema, schema_name)
        return ChatReply("the answer is fine {") if len(self.seen) % 2 else reply


def _opts(**kw: Any) -> dict[str, Any]:
    return {
        "scripts": EXAMPLE,
        "responder": "template",
        "answerer": None,
        "judge": "local:qwen2.5-coder-1.5b",
        "levels": "1,2",
        "conditions": "clean,noised",
        "per_level": None,
        "seed": 0,
        "json_path": None,
        **kw,
    }


def test_template_responder_judged_per_level_and_condition(tmp_path: Path) -> None:
    judge = MockJudge()
    out = tmp_path / "eval.json"
    record = run(_opts(json_path=out), judge_provider=judge)
    m = record["metrics"]
    assert json.loads(out.read_text())["metrics"]["table"] == m["table"]
    assert record["benchmark"] == "eval-dialog" and record["git"] and record["load_start"] is not None
    # 2 level-1 and 3 level-2 turns in the example, each under both conditions.
    assert m["turns_selected"] == 5 and m["turns_judged"] == 10 and m["judge_failures"] == 0
    assert set(m["table"]) == {f"level{lv}/{c}" for lv in (1, 2) for c in ORACLE}
    first = judge.seen[0]
    assert list(first) == ["level1_memory", "level2_memory", "user_said", "reference_answer", "model_answer"]
    assert first["level1_memory"].startswith("Current user: Maria")
    supervisor = next(s for s in judge.seen if s["user_said"] == "Is my supervisor around today?")
    assert supervisor["level2_memory"] == "- Lena is away at a conference in Kyoto until Friday"
    # The template responder asks for a lookup on "my son" (a relation word it knows) and reads the fact back.
    row = m["table"]["level2/clean"]
    assert row["lookup_rate"] == pytest.approx(1 / 3)
    assert row["fact_score"] == pytest.approx(1 / 3) and row["fact_score_ci95"][0] < 1 / 3 < row["fact_score_ci95"][1]
    assert m["table"]["level1/clean"]["fact_score"] == 0.0  # it greets, but does not answer level-1 questions


def test_malformed_judge_json_is_a_judge_failure_not_a_crash() -> None:
    m = run(_opts(conditions="clean"), judge_provider=FlakyMockJudge())["metrics"]
    assert m["judge_failures"] == 3 and m["turns_judged"] == 2
    failed = [t for t in m["turns"] if t["judge_failure"]]
    assert {t["judge_failure"] for t in failed} == {"malformed JSON"} and all(t["fact_score"] is None for t in failed)


class MockCompleter:
    """Plumbing only: a cascaded model's endpoint that asks for a lookup, then answers from Level 2."""

    def __init__(self) -> None:
        self.systems: list[str] = []

    def complete(self, messages: list[dict[str, str]], **_: object) -> ChatReply:
        self.systems.append(messages[0]["content"])
        if "You requested a lookup" not in messages[0]["content"]:
            return ChatReply("<retr>:\nsupervisor\nsupervisor, today")
        level2 = messages[0]["content"].split("Level 2 (people this user knows, from your last lookup):", 1)[1]
        return ChatReply("From memory: " + level2.split("\n\n")[0].strip().lstrip("- "))


def test_cascaded_responder_gets_level2_at_answer_and_noise_adds_distractors() -> None:
    script = load_script(EXAMPLE)
    turns = [t for t in select_turns(script, (2,), None) if "supervisor" in t.said]
    llm = MockCompleter()
    results = run_eval(
        script, lambda: CascadedChatModel(llm, temperature=0.0), MockJudge(), turns=turns, conditions=ORACLE
    )
    clean, noised = results
    assert clean.queried and clean.answer.startswith("From memory: Lena is away at a conference in Kyoto")
    assert clean.fact_score == 1
    # Noised: the lookup brings back the gold fact among three others of the script.
    after_lookup = [s for s in llm.systems if "You requested a lookup" in s][-1]
    level2 = after_lookup.split("from your last lookup):", 1)[1].split("\n\n")[0]
    assert "Lena is away" in level2 and level2.count("\n- ") == 3
    assert noised.condition == "noised"


def test_the_judge_must_differ_from_the_answering_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["eval", "dialog", "--scripts", str(EXAMPLE), "--responder", "cascaded"]
    argv += ["--answerer", "local:qwen2.5-coder-0.5b", "--judge", "local:qwen2.5-coder-0.5b"]
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "must differ from the answering model" in err
    a, b = parse_spec("openai:Qwen@http://h:8000/v1/"), parse_spec("openai:qwen@http://h:8000/v1")
    with pytest.raises(InputError, match="must differ"):
        check_different(a, b)
    check_different(parse_spec("local:qwen2.5-coder-1.5b"), parse_spec("local:qwen2.5-coder-0.5b"))


@pytest.mark.parametrize(
    ("name", "content", "match"),
    [
        ("s.json", "", "invalid script"),
        ("s.jsonl", "", "invalid script at users"),
        ("s.json", '{"users": [], "sessions": []}', "invalid script"),
        ("s.json", "{not json", "Invalid JSON"),
        ("s.jsonl", "{not json", "not JSON"),
    ],
)
def test_bad_script_files_are_one_line_errors(tmp_path: Path, name: str, content: str, match: str) -> None:
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(InputError, match=match):
        run(_opts(scripts=path), judge_provider=MockJudge())


def test_bad_options_are_errors_before_any_model_loads(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="needs --answerer"):
        run(_opts(responder="cascaded"))
    with pytest.raises(InputError, match="expected local"):
        run(_opts(judge="qwen"))
    with pytest.raises(InputError, match="--levels"):
        run(_opts(levels="3"))
    only_chat = tmp_path / "chat.jsonl"
    only_chat.write_text(
        '{"user": {"id": "u", "name": "U"}}\n'
        '{"session": {"id": "s", "user": "u", "turns": [{"user": "hi", "assistant": "hello"}]}}\n'
    )
    with pytest.raises(InputError, match="no turns of level 1, 2"):
        run(_opts(scripts=only_chat), judge_provider=MockJudge())


def test_intervals() -> None:
    lo, hi = wilson(0, 10) or (None, None)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-3)
    lo, hi = wilson(5, 10) or (None, None)
    assert lo == pytest.approx(0.2366, abs=1e-3) and hi == pytest.approx(0.7634, abs=1e-3)
    assert wilson(0, 0) is None and bootstrap_mean([]) is None
    assert bootstrap_mean([7.0, 7.0, 7.0]) == (7.0, 7.0)
    lo2, hi2 = bootstrap_mean([0.0, 10.0] * 10) or (0.0, 0.0)
    assert lo2 < 5.0 < hi2
