"""`egomem bench eval-dialog`: the personalised dialog evaluation (`egomem eval dialog`, docs/eval.md)
as a benchmark, so its figures carry the benchmark envelope like every other in BENCHMARKS.md.

The same code runs (egomem_training.eval, imported when this bench runs; the training package
imports no benchmark, so the dependency runs one way: bench > training > egomem_eval).
Options as `--set`: scripts (required), responder (template | cascaded), answerer, judge
(required), judge_note, levels, conditions, per_level, seed, threads.
"""

from __future__ import annotations

from typing import Any

from egomem.bench import BenchOptions, BenchResult, register
from egomem.errors import InputError


@register("eval-dialog")
def run(options: BenchOptions) -> BenchResult:
    x = options.extra
    for required in ("scripts", "judge"):
        if not x.get(required):
            raise InputError(f"bench eval-dialog needs --set {required}=...")
    try:
        from egomem_training.eval import cli_entry as entry
    except ImportError as exc:
        raise InputError(f"the training package is not installed ({exc})") from exc
    opts: dict[str, Any] = {
        "scripts": x["scripts"],
        "responder": x.get("responder", "template"),
        "answerer": x.get("answerer"),
        "judge": x["judge"],
        "judge_note": x.get("judge_note", ""),
        "levels": x.get("levels", "1,2"),
        "conditions": x.get("conditions", "clean,noised"),
        "per_level": int(x["per_level"]) if x.get("per_level") else None,
        "seed": int(x.get("seed", 0)),
        "threads": int(x.get("threads", 2)),
        "json_path": None,  # the bench writes the result, with its own envelope
        "verbose": False,
    }
    metrics: dict[str, Any] = entry.run(opts)["metrics"]
    rows = [[line] for line in entry.table_lines(metrics)]
    return BenchResult("eval-dialog", metrics, [("personalised dialog, LLM-judged", ["result"], rows)])
