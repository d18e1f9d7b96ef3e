"""`egomem bench conversation`: is what the agent remembers from spoken conversations right?

Seeded two-day scenarios (egomem.bench.convo) with 2-3 people, drawn from a bank of
people and from sentence templates split into a dev half (used while building) and a
test half (reported), are run through the product: `audio` renders each day as a
recording (offline TTS voices, real face photos) and runs the whole agent over it;
`transcript` gives the gold turns to the same memory manager (the text-only upper
bound). Each extractor (`rules`; `local`, the on-device LLM, when installed and its
model assembled) runs on its own store per scenario. The matching rule and every
metric are defined in egomem.bench.convo.score.

Options (`--set key=value`): scenarios=N per split (default 10; --quick: 2),
split=dev|test|both (default both), extractors=rules,local (default: both, local
reported as not run when unavailable), variants=audio,transcript (default both;
--quick: transcript), audio_scenarios=M and local_scenarios=K (run the audio variant /
the local extractor on the first M / K scenarios only), cache=DIR for
rendered media, dump=DIR for one JSON per scenario run (turns, gold, memory, counts).
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

from egomem.bench import BenchOptions, BenchResult, data_root, register
from egomem.bench.convo.drive import run_audio, run_transcript
from egomem.bench.convo.media import render_scenario
from egomem.bench.convo.report import write_dump
from egomem.bench.convo.score import Tally, metrics, score
from egomem.config import Config, load_config
from egomem.errors import EgomemError, InputError
from egomem.providers import create
from egomem.registry import registry
from egomem.runtime.build import Models
from egomem.runtime.demo import memory_snapshot
from egomem.store.sqlite import SQLiteStore
from egomem_eval.convo.scenario import Scenario, generate
from egomem_eval.convo.templates import all_templates, split_of

EXTRACTORS = ("rules", "local")
VARIANTS = ("audio", "transcript")


def config_for(extractor: str) -> Config:
    """The product's configuration, with the memory extractor/update agent set to `extractor`."""
    return load_config(environ={**os.environ, "EGOMEM_LLM__PROVIDER": extractor})


def unavailable(extractor: str, cfg: Config, models: Models) -> str | None:
    """Why `extractor` cannot run here (None when it can)."""
    info = registry("llm").info(extractor)
    if not info.installed:
        return f"missing packages: {', '.join(info.missing)}"
    try:
        create("llm", cfg.llm, models.context)
    except EgomemError as exc:
        return str(exc)
    return None


def _list(options: BenchOptions, key: str, default: tuple[str, ...], allowed: tuple[str, ...]) -> list[str]:
    raw = options.extra.get(key)
    values = [x.strip() for x in raw.split(",") if x.strip()] if raw else list(default)
    bad = [v for v in values if v not in allowed]
    if bad or not values:
        raise InputError(f"{key} must be a comma list of {', '.join(allowed)}; got {raw!r}")
    return values


def run_one(
    sc: Scenario, variant: str, cfg: Config, models: Models, data: Path, cache: Path | None, dump: Path | None = None
) -> Tally:
    """One scenario through the product on a fresh store; with `dump`, writes what happened
    (turns, gold, the people mapping, what the assistant said, the memory) for reading by hand."""
    with tempfile.TemporaryDirectory(prefix="egomem-conv-") as tmp:
        store = SQLiteStore(Path(tmp) / "memory.db")
        try:
            t0 = time.perf_counter()
            if variant == "audio":
                obs = run_audio(sc, render_scenario(sc, data, cache), store, cfg, models)
            else:
                obs = run_transcript(sc, store, cfg, models)
            wall = time.perf_counter() - t0
            tally = score(sc, store, obs)
            if dump is not None:
                name = f"{sc.split}-{sc.seed}-{cfg.llm.provider}-{variant}.json"
                write_dump(dump / name, sc, obs, memory_snapshot(store), tally)
        finally:
            store.close()
    tally.add("wall_s_per_session", wall, len(sc.sessions))
    tally.add("gold_facts", sum(not f.retracted for f in sc.facts), 0)
    tally.add("gold_relations", len(sc.relations), 0)
    tally.add("level2_questions", len(sc.level2), 0)
    return tally


@register("conversation")
def run(options: BenchOptions) -> BenchResult:
    data = data_root(options)
    n = int(options.extra.get("scenarios", 2 if options.quick else 10))
    # Audio and the local LLM are many times slower than transcript + rules: they may be capped.
    n_audio = int(options.extra.get("audio_scenarios", n))
    n_local = int(options.extra.get("local_scenarios", n))
    split = options.extra.get("split", "both")
    if split not in ("dev", "test", "both"):
        raise InputError(f"split must be dev, test or both; got {split!r}")
    splits = ["dev", "test"] if split == "both" else [split]
    extractors = _list(options, "extractors", EXTRACTORS, EXTRACTORS)
    variants = _list(options, "variants", ("transcript",) if options.quick else VARIANTS, VARIANTS)
    cache = Path(options.extra["cache"]) if "cache" in options.extra else None
    dump = Path(options.extra["dump"]) if "dump" in options.extra else None
    models = Models(config_for("rules"))
    configs, not_run = {}, {}
    for ext in extractors:
        cfg = config_for(ext)
        why = unavailable(ext, cfg, models)
        if why is None:
            configs[ext] = cfg
        else:
            not_run[ext] = why
    results: dict[str, Any] = {}
    rows = []
    for sp in splits:
        tallies = {(e, v): Tally() for e in configs for v in variants}
        for seed in range(n):
            options.report(f"conversation: {sp} scenario {seed + 1} of {n}")
            sc = generate(sp, seed)
            for (ext, variant), tally in tallies.items():
                if (variant == "transcript" or seed < n_audio) and (ext != "local" or seed < n_local):
                    tally.merge(run_one(sc, variant, configs[ext], models, data, cache, dump))
        for (ext, variant), tally in tallies.items():
            m = {**metrics(tally), **_counts(tally)}
            results.setdefault(sp, {}).setdefault(ext, {})[variant] = m
            rows.append([sp, ext, variant, *(_cell(m[k]) for k in _COLUMNS)])
    results["templates"] = {sp: sum(split_of(t) == sp for t in all_templates()) for sp in ("dev", "test")}
    results["not_run"] = not_run
    if "audio" in variants:
        results["asr"] = type(models.transcriber).__name__
    results["load_avg_1min"] = os.getloadavg()[0]
    notes = [f"{e}: not run ({why})" for e, why in not_run.items()]
    notes.append("extract_cpu_s: process_time around MemoryManager.process; audio includes concurrent agent threads")
    notes.append(f"load average (1 min) at the end: {results['load_avg_1min']:.2f}")
    header = ["split", "extractor", "variant", *_COLUMNS]
    return BenchResult("conversation", results, [("conversation memory", header, rows)], notes)


_COLUMNS = (
    "name_recall",
    "fact_recall",
    "fact_precision",
    "relation_recall",
    "updates_applied",
    "false_memories_per_session",
    "greeting_by_name",
    "level2_correct",
    "extract_cpu_s_per_session",
    "wall_s_per_session",
    "merges",
    "splits",
)


def _counts(t: Tally) -> dict[str, Any]:
    return {
        "wall_s_per_session": t.ratio("wall_s_per_session"),
        "scenarios": int(t.total("scenarios")),
        "sessions": int(t.total("sessions")),
        "gold_facts": int(t.total("gold_facts")),
        "gold_relations": int(t.total("gold_relations")),
        "level2_questions": int(t.total("level2_questions")),
        "updates_total": int(t.total("updates_total")),
        "updates_measurable": int(t.counts.get("updates_applied", [0, 0])[1]),
    }


def _cell(v: Any) -> Any:
    return "-" if v is None else v
