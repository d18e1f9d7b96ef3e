"""bench extract: the LLM session choice, the chance control, and a rules run on a tiny
LoCoMo-shaped file (no model)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypeVar

import pytest
from pydantic import BaseModel

from egomem.bench import BenchOptions, extract, run_bench
from egomem.bench.extract import _chance_partners, pick_llm_sessions
from egomem.errors import InputError
from egomem.llm.base import LLMError, PromptTooLong
from egomem.memory.extractor import MemoryExtractor
from egomem.memory.items import SessionText, Turn
from egomem.memory.rules_provider import RulesProvider

T = TypeVar("T", bound=BaseModel)


def _records(convs: int, sessions: int) -> list[dict[str, object]]:
    return [
        {"conv": f"c{ci}", "conv_index": ci, "session": s, "speaker": sp, "obs": [("x", frozenset())]}
        for ci in range(convs)
        for s in range(1, sessions + 1)
        for sp in ("A", "B")
    ]


def test_llm_sessions_spread_over_test_conversations() -> None:
    recs = _records(10, 20)
    picked = pick_llm_sessions(recs, 12)
    assert len(picked) == len(set(picked)) == 12
    assert {c for c, _ in picked} == {"c5", "c6", "c7", "c8", "c9"}  # conversations 6-10
    assert pick_llm_sessions(recs, 12) == picked  # from the data alone
    per_conv = [sum(1 for c, _ in picked if c == f"c{i}") for i in range(5, 10)]
    assert per_conv == [3, 3, 2, 2, 2]
    assert [s for c, s in picked if c == "c5"] == [1, 11, 20]  # spread over the sessions
    assert pick_llm_sessions(recs, 0) == []
    assert len(pick_llm_sessions(recs, 1000)) == 5 * 20
    # One conversation loaded (--quick): its sessions are the ones used.
    assert pick_llm_sessions(_records(1, 2), 1) == [("c0", 1)]


def test_chance_partner_is_the_same_speaker_in_another_session() -> None:
    recs = _records(3, 4)
    for r, j in zip(recs, _chance_partners(recs), strict=True):
        assert j is not None
        o = recs[j]
        assert (o["conv"], o["speaker"]) == (r["conv"], r["speaker"]) and o["session"] != r["session"]
    assert _chance_partners(_records(1, 1)) == [None, None]


def _locomo(path: Path) -> Path:
    def session(n: int, a: str, b: str) -> list[dict[str, str]]:
        return [
            {"speaker": "Ana", "dia_id": f"D{n}:1", "text": a},
            {"speaker": "Ben", "dia_id": f"D{n}:2", "text": b},
        ]

    conv = {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": session(1, "I work as a nurse at the city hospital.", "I love playing chess every evening."),
        "session_2_date_time": "2:00 pm on 9 June, 2023",
        "session_2": session(2, "I moved to Lisbon last month.", "My sister Eva is a pilot."),
    }
    obs = {
        "session_1_observation": {
            "Ana": [["Ana works as a nurse at the city hospital.", "D1:1"]],
            "Ben": [["Ben loves playing chess in the evening.", "D1:2"]],
        },
        "session_2_observation": {
            "Ana": [["Ana moved to Lisbon.", "D2:1"]],
            "Ben": [["Ben has a sister named Eva who is a pilot.", ["D2:2"]]],
        },
    }
    path.write_text(json.dumps([{"sample_id": "conv-x", "conversation": conv, "observation": obs}]))
    return path


def test_rules_run_reports_controls(tmp_path: Path) -> None:
    out = tmp_path / "e.json"
    data = _locomo(tmp_path / "locomo10.json")
    run_bench("extract", BenchOptions(data=data, json_path=out, extra={"extractors": "rules"}))
    m = json.loads(out.read_text())["metrics"]
    r = m["rules"]
    assert r["sessions"] == 2 and r["observations"] == 4 and r["items"] >= 2
    assert 0.0 <= r["chance_precision"] <= 1.0 and 0.0 <= r["null_rate"] <= 1.0
    # The rules find the nurse job: an item of its own session, not of the other one.
    assert r["recall"] > 0 and r["precision"] > r["chance_precision"]
    assert (m["precision"], m["recall"]) == (r["precision"], r["recall"])  # the summary row's keys
    assert "local" not in m


def test_bad_options(tmp_path: Path) -> None:
    data = _locomo(tmp_path / "locomo10.json")
    with pytest.raises(InputError):
        run_bench("extract", BenchOptions(data=data, extra={"extractors": "gpt"}))
    with pytest.raises(InputError):
        run_bench("extract", BenchOptions(data=tmp_path / "missing.json"))


class _FakeLocal(RulesProvider):
    """Stands in for the local model (answers with the rules) so the local path runs in a test."""

    name = "local"


class _Failing(RulesProvider):
    name = "local"

    def run(self, task: str, payload: BaseModel, schema: type[T]) -> T:
        raise LLMError("answer cut off")


@pytest.mark.parametrize("provider", [_FakeLocal, _Failing])
def test_local_path_is_scored_on_the_chosen_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, provider: type[RulesProvider]
) -> None:
    monkeypatch.setattr(extract, "_local_provider", lambda threads: (provider(), 2))
    out = tmp_path / "e.json"
    data = _locomo(tmp_path / "locomo10.json")
    run_bench("extract", BenchOptions(data=data, json_path=out, extra={"llm_sessions": "1"}))
    m = json.loads(out.read_text())["metrics"]
    assert m["llm_sessions"] == ["conv-x/1"] and m["llm_threads"] == 2
    local, same, alone = m["local"], m["rules_same_sessions"], m["local_model_only"]
    assert local["sessions"] == same["sessions"] == alone["sessions"] == 1 and m["rules"]["sessions"] == 2
    assert local["observations"] == same["observations"] == 2
    if provider is _FakeLocal:  # rules as the model, rules as the supplement: the rules' own items
        assert local["items"] == same["items"] == alone["items"] and local["fallbacks"] == 0
        assert (local["precision"], local["recall"]) == (same["precision"], same["recall"])
    else:  # every model answer failed: the rules answered, the model alone gave nothing
        assert local["fallbacks"] == 2 and alone["items"] == 0 and local["items"] == same["items"]


class _CountingPieces(RulesProvider):
    """A mock model (plumbing only): refuses a session of more than one user turn as too long,
    answers a piece with the rules, and counts the calls that reach it."""

    name = "local"

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[int] = []

    def run(self, task: str, payload: BaseModel, schema: type[T]) -> T:
        self.asked.append(len(getattr(payload, "turns", [])))
        if len(getattr(payload, "turns", [])) > 1:
            raise PromptTooLong("too long for the mock")
        return super().run(task, payload, schema)


def test_the_replay_asks_each_piece_of_a_long_session_once() -> None:
    model = _CountingPieces()
    replay = extract._Replay(model)
    turns = [
        Turn(speaker="user", text="I work as a nurse."),
        Turn(speaker="user", text="My sister Ana lives in Porto."),
    ]
    session = SessionText(episode_id="long", start=0, end=1, date="3 March 2025", turns=turns)
    first = MemoryExtractor(replay).extract(session)
    assert model.asked == [2, 1, 1]  # the whole refused, then each half: no half answered for another
    texts = {it.text for it in first.items}
    assert any("nurse" in t for t in texts) and any("Porto" in t or "sister" in t for t in texts)
    again = MemoryExtractor(replay).extract(
        session.model_copy(update={"turns": [t.model_copy(update={"text": t.text.lower()}) for t in turns]})
    )
    assert model.asked == [2, 1, 1]  # replayed, case aside: the refusal too, with no new call
    assert len(again.items) == len(first.items)
