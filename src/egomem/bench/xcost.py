"""`egomem bench xcost`: what memory extraction costs per session, setting by setting.

Each row is a configuration of the product (the default first, then rows that change one or
more settings); each runs the same seeded conversation scenarios (egomem_eval.convo, the dev
half of the templates by default) through the product exactly as `bench conversation
--set variants=transcript` does: the gold user turns of each session go to the agent's
`MemoryManager` (extractor, rules supplement, update agent, store), and the store is scored
by egomem.bench.convo.score (fact recall / precision, relations, updates, false memories).

Per session: tokens in (prompt), tokens actually evaluated (a reused prefix is not
recomputed: llama.cpp's own counters), tokens out, model calls, CPU seconds
(`time.process_time` around `MemoryManager.process`, as the agent's hook reports it: the
model, the rules, the update agent's embeddings and the write) and the model's share of them,
wall seconds, and the model's wall seconds split by llama.cpp's own timers into the prompt,
the generated tokens and the rest (sampling under the JSON grammar). The 1-minute load average is
taken at the start and the end: the CPU seconds of a 2-thread model grow on a loaded machine
(threads wait and spin), so read them with it.

Options (`--set key=value`):
- rows: rows separated by ";", each a comma list of `section.key=value` settings of the
  configuration (`llm.prefix_cache=off`, `memory.extract_schema=short`,
  `llm.model=/path/to/qwen2.5-coder-0.5b.gguf`); the default row is always run first.
  Default: DEFAULT_ROWS.
- scenarios=N (default 3; --quick: 1), split=dev|test (default dev), first=K (the first
  scenario seed, default 0); baseline=false leaves the default row out (a partial re-run).
- gate_scenarios=M (default 10): the gate census, without a model: on M scenarios of the split,
  how many sessions `memory.extract_gate` would leave to the rules, and how many of the user's
  statements of a personal kind (the scenario's own labels) those sessions held: what it can lose.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from egomem.bench import BenchOptions, BenchResult, parse_settings, register, settings_environ
from egomem.bench.convo.drive import run_transcript
from egomem.bench.convo.score import Tally, metrics, score
from egomem.config import Config, load_config
from egomem.errors import EgomemError, InputError
from egomem.llm.base import LLMProvider
from egomem.memory.gate import worth_a_model
from egomem.memory.items import Extraction, SessionText, Turn
from egomem.memory.rules_provider import RulesProvider
from egomem.providers import create
from egomem.runtime.build import Models
from egomem.store.sqlite import SQLiteStore
from egomem_eval.convo.scenario import generate

# One setting at a time from the default, then the combination chosen (docs/benchmarks/xcost.md).
DEFAULT_ROWS = (
    "llm.prefix_cache=off",
    "llm.prefix_cache=ram",
    "memory.extract_schema=short",
    "memory.extract_gate=true",
    "memory.update_agent=llm",
)
QUALITY = ("fact_recall", "fact_precision", "relation_recall", "updates_applied", "false_memories_per_session")


def parse_rows(raw: str | None, baseline: bool = True) -> list[dict[str, str]]:
    """'a.b=1,c.d=x;e.f=2' -> [{'a.b': '1', 'c.d': 'x'}, {'e.f': '2'}], the default row ({}) first
    (unless `baseline` is False)."""
    rows: list[dict[str, str]] = [{}] if baseline else []
    for part in raw.split(";") if raw is not None else list(DEFAULT_ROWS):
        row = parse_settings(part)
        if row and row not in rows:
            rows.append(row)
    return rows


def label(row: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in row.items()) or "default"


def config_of(row: dict[str, str]) -> Config:
    """The product's configuration (its own defaults, the local LLM) with the row's settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EGOMEM_LLM__", "EGOMEM_MEMORY__"))}
    env.update(settings_environ(row))
    try:
        return load_config(environ=env)
    except EgomemError as exc:
        raise InputError(f"row {label(row)}: {exc}") from exc


def _run_row(
    row: dict[str, str], seeds: list[int], split: str, models: Models, options: BenchOptions
) -> dict[str, Any]:
    cfg = config_of(row)
    try:
        llm: LLMProvider = create("llm", cfg.llm, models.context)
    except EgomemError as exc:
        return {"not_run": str(exc)}
    u0 = _usage(llm)
    tally, cpu, wall = Tally(), [], []
    for seed in seeds:
        options.report(f"xcost: {label(row)}: {split} scenario {seed}")
        sc = generate(split, seed)
        with tempfile.TemporaryDirectory(prefix="egomem-xcost-") as tmp:
            store = SQLiteStore(Path(tmp) / "memory.db")
            try:
                obs = run_transcript(sc, store, cfg, models, llm=llm)
                tally.merge(score(sc, store, obs))
            finally:
                store.close()
        cpu += obs.cpu_s
        wall += obs.wall_s
    used = {k: v - u0[k] for k, v in _usage(llm).items()}
    n = max(1, len(cpu))
    m = metrics(tally)
    return {
        "provider": llm.name,
        "model": getattr(llm, "model_name", ""),
        "sessions": len(cpu),
        "calls_per_session": used["calls"] / n,
        "failures": int(used["failures"]),
        "tokens_in_per_session": used["prompt_tokens"] / n,
        "tokens_evaluated_per_session": used["prompt_tokens_evaluated"] / n,
        "tokens_out_per_session": used["completion_tokens"] / n,
        "cpu_s_p50": statistics.median(cpu) if cpu else None,
        "cpu_s_mean": statistics.fmean(cpu) if cpu else None,
        "model_cpu_s_per_session": used["cpu_seconds"] / n,
        # Where the model's wall seconds went (llama.cpp's timers; zeros for a server): the prompt,
        # the generated tokens, and the rest (sampling under the JSON grammar, and Python).
        "model_wall_s_per_session": used["seconds"] / n,
        "prompt_eval_s_per_session": used["prompt_eval_seconds"] / n,
        "decode_s_per_session": used["decode_seconds"] / n,
        "sampling_s_per_session": (used["seconds"] - used["prompt_eval_seconds"] - used["decode_seconds"]) / n,
        "wall_s_mean": statistics.fmean(wall) if wall else None,
        **{k: m.get(k) for k in QUALITY},
    }


def _usage(llm: LLMProvider) -> dict[str, float]:
    u = llm.usage
    return {
        "calls": u.calls,
        "failures": u.failures,
        "prompt_tokens": u.prompt_tokens,
        "prompt_tokens_evaluated": u.prompt_tokens_evaluated,
        "completion_tokens": u.completion_tokens,
        "cpu_seconds": u.cpu_seconds,
        "seconds": u.seconds,
        "prompt_eval_seconds": u.prompt_eval_seconds,
        "decode_seconds": u.decode_seconds,
    }


_COLUMNS = (
    "sessions",
    "calls_per_session",
    "tokens_in_per_session",
    "tokens_evaluated_per_session",
    "tokens_out_per_session",
    "cpu_s_p50",
    "cpu_s_mean",
    "model_cpu_s_per_session",
    "model_wall_s_per_session",
    "prompt_eval_s_per_session",
    "decode_s_per_session",
    "sampling_s_per_session",
    "wall_s_mean",
    *QUALITY,
)


def _cell(v: Any) -> Any:
    if v is None:
        return "-"
    return round(v, 3) if isinstance(v, float) else v


@register("xcost")
def run(options: BenchOptions) -> BenchResult:
    n = int(options.extra.get("scenarios", 1 if options.quick else 3))
    split = options.extra.get("split", "dev")
    if split not in ("dev", "test"):
        raise InputError(f"split must be dev or test; got {split!r}")
    first = int(options.extra.get("first", 0))
    baseline = options.extra.get("baseline", "true").lower() not in ("false", "0", "no")
    rows = parse_rows(options.extra.get("rows"), baseline)
    census = gate_census(split, list(range(int(options.extra.get("gate_scenarios", 10)))))
    seeds = list(range(first, first + n))
    load_start = os.getloadavg()
    t0 = time.perf_counter()
    models = Models(config_of({}))
    results: dict[str, Any] = {}
    table = []
    for row in rows:
        r = _run_row(row, seeds, split, models, options)
        results[label(row)] = r
        options.report(f"xcost: {label(row)}: " + ", ".join(f"{k}={_cell(v)}" for k, v in r.items()))
        if "not_run" in r:
            table.append([label(row), *(["-"] * len(_COLUMNS)), r["not_run"]])
        else:
            table.append([label(row), *(_cell(r[k]) for k in _COLUMNS), r["model"]])
    load_end = os.getloadavg()
    out = {
        "split": split,
        "seeds": seeds,
        "rows": results,
        "load_avg_start": list(load_start),
        "load_avg_end": list(load_end),
        "cpu_count": os.cpu_count(),
        "gate_census": census,
        "wall_s": time.perf_counter() - t0,
    }
    notes = [
        f"{split} scenarios {seeds[0]}..{seeds[-1]}; the first row is the product's default configuration",
        "cpu_s: process_time around MemoryManager.process per session (model, rules, update agent, write); "
        "model_cpu_s: the LLM calls alone; tokens_evaluated: prompt tokens computed (a reused prefix is not)",
        f"load average (1/5/15 min) at start {_load(load_start)}, at end {_load(load_end)}; {os.cpu_count()} CPUs",
    ]
    header = ["row", *_COLUMNS, "model"]
    gate_table = [[split, census["scenarios"], census["sessions"], census["gated"], census["personal_in_gated"]]]
    gate_header = ["split", "scenarios", "sessions", "gated (no model)", "personal statements in gated sessions"]
    tables = [("extraction cost per session", header, table), ("gate census (no model)", gate_header, gate_table)]
    return BenchResult("xcost", out, tables, notes)


# Utterance kinds of the scenarios that state nothing about the speaker (egomem_eval/convo/templates.py).
NOT_PERSONAL = frozenset({"smalltalk", "joke", "question", "question_person", "greet_again"})


def gate_census(split: str, seeds: list[int]) -> dict[str, Any]:
    """What `memory.extract_gate` would do on the split's sessions (gold user turns), without a model."""
    rules = RulesProvider()
    sessions = gated = personal = 0
    for seed in seeds:
        for s in generate(split, seed).sessions:
            text = SessionText.dated(0.0, 60.0, [Turn(speaker="user", text=u.text) for u in s.turns])
            sessions += 1
            if not worth_a_model(text, rules.run("extract", text, Extraction).items):
                gated += 1
                personal += sum(u.kind not in NOT_PERSONAL and not u.kind.startswith("ask_") for u in s.turns)
    return {"scenarios": len(seeds), "sessions": sessions, "gated": gated, "personal_in_gated": personal}


def _load(avg: tuple[float, float, float]) -> str:
    return "/".join(f"{x:.2f}" for x in avg)
