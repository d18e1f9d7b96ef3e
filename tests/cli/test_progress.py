"""Progress everywhere long (#23 item 4, #21): `ask`, `bench` and `data build` say what they do,
as timestamped step lines when stderr is piped (a spinner or a bar on a terminal)."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TypeVar

import pytest
from pydantic import BaseModel

from egomem.cli.progress import Counted, phases
from egomem.llm.base import LLMProvider
from egomem.retrieval.ask import Asker
from egomem.retrieval.dense import EmbeddingCache
from egomem.retrieval.encoder import default_encoder
from egomem.schemas import Fact
from egomem.store.sqlite import SQLiteStore

T = TypeVar("T", bound=BaseModel)
STAMP = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d "
EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "data" / "example_script.json"


def _egomem(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "egomem.cli.main", "--data-dir", str(data_dir), *args],
        capture_output=True,  # stderr is a pipe: step lines, not a bar
        text=True,
        timeout=300,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )


def test_phases_piped_say_when_each_step_begins_and_ends(capsys: pytest.CaptureFixture[str]) -> None:
    with phases("ask", terminal=False) as say:
        say("loading")
        say("searching")
    lines = capsys.readouterr().err.splitlines()
    assert [re.sub(STAMP, "", ln) for ln in lines[::2]] == ["ask: loading", "ask: searching"]
    assert all(re.match(STAMP + r"ask: \w+: done in \d+\.\d s$", ln) for ln in lines[1::2]) and len(lines) == 4


def test_phases_on_a_terminal_tick_each_step(monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    with phases("ask", terminal=True) as say:
        say("loading the language model")
        say("searching memory")
    shown = err.getvalue()
    assert "loading the language model" in shown and "searching memory" in shown and "✓" in shown


def test_counted_piped_marks_tenths(capsys: pytest.CaptureFixture[str]) -> None:
    bar = Counted("data build", "stream(s)", 20, terminal=False)
    for _ in range(20):
        bar.advance()
    bar.close()
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 10 and all(re.match(STAMP + r"data build: \d+ of 20 stream\(s\) done", ln) for ln in lines)
    assert [int(ln.split("build: ")[1].split()[0]) for ln in lines] == list(range(2, 21, 2))


class _EchoLLM(LLMProvider):
    """A mock LLM provider, for the plumbing only: answers with the first evidence item."""

    name = "mock"

    def run(self, task: str, payload: BaseModel, schema: type[T]) -> T:
        return schema.model_validate({"answer": payload.model_dump()["evidence"][0]["text"], "used": [1]})


def test_asker_reports_its_steps(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "memory.db")
    store.add_fact(Fact(user_id=store.create_user("John").id, text="loves tennis"))
    told: list[str] = []
    res = Asker(store, EmbeddingCache(default_encoder()), llm=_EchoLLM(), report=told.append).ask("Who plays tennis?")
    store.close()
    assert res.answered_by == "llm:mock"
    assert told[0] == "searching memory (round 1)"
    assert told[-1] == f"asking the language model (mock) with {len(res.evidence)} evidence item(s)"


def test_ask_piped_prints_step_lines_and_clean_json(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "memory.db")
    store.add_fact(Fact(user_id=store.create_user("John").id, text="loves tennis"))
    store.close()
    r = _egomem(tmp_path, "ask", "Who loves tennis?", "--no-llm", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["answered_by"] == "evidence"  # the progress stays on stderr
    steps = [re.sub(STAMP, "", ln) for ln in r.stderr.splitlines() if re.match(STAMP + "ask: ", ln)]
    assert steps[0] == "ask: loading the text encoder"
    assert re.match(r"ask: loading the text encoder: done in \d+\.\d s$", steps[1])
    assert steps[2] == "ask: searching memory (round 1)" and re.match(r"ask: searching .*: done in", steps[-1])


def test_bench_piped_prints_step_lines(tmp_path: Path) -> None:
    r = _egomem(tmp_path, "bench", "smoke", "--quick")
    assert r.returncode == 0, r.stderr
    steps = [re.sub(STAMP, "", ln) for ln in r.stderr.splitlines() if re.match(STAMP, ln)]
    assert steps[0] == "bench: smoke: loading" and "bench: smoke: running (--quick)" in steps
    assert re.match(r"bench: smoke: running \(--quick\): done in \d+\.\d s", steps[-1])


def test_data_build_piped_prints_step_lines(tmp_path: Path) -> None:
    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed")
    out = tmp_path / "out"
    args = ["data", "build", str(EXAMPLE), "--out", str(out), "--sessions-per-stream", "1", "--no-picture"]
    r = _egomem(tmp_path, *args, "--assistant-voice", "espeak-ng", "--user-engines", "espeak-ng")
    assert r.returncode == 0, r.stderr
    steps = [re.sub(STAMP, "", ln) for ln in r.stderr.splitlines() if re.match(STAMP, ln)]
    assert steps[0] == "data build: example_script.json: preparing the tokenizers and voices"
    assert [s.split(" (")[0] for s in steps[1:]] == [
        "data build: 1 of 2 stream(s) done",
        "data build: 2 of 2 stream(s) done",
    ]
