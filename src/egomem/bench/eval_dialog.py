"""`egomem bench eval-dialog`: the personalised dialog evaluation (`egomem eval dialog`, docs/eval.md)
as a benchmark, so its figures carry the benchmark envelope like every other in BENCHMARKS.md.

The same code runs (egomem_training.eval, imported when this bench runs; the training package
imports no benchmark, so the dependency runs one way: bench > training > egomem_eval).
By default the answerer's MemChunks are the product's (condition `product`: the earlier sessions
memorised by the product's memory manager, read back by its retrieval); `--set conditions=product,clean`
adds the oracle rows. Without `--set scripts=FILE` the scripts are built from LoCoMo in the data root
(`--data`, else the default root): test conversations conv-44 and conv-47, speaker A the user.
Options as `--set`: judge (required), judge_note, scripts, conversations, roles, responder (template |
cascaded), answerer, llm (the memory extractor: the configuration's by default, `rules` for speed),
sessions (at most this many memorised sessions per user, the latest), levels, conditions, per_level,
seed, threads.
"""

from __future__ import annotations

from typing import Any

from egomem.bench import BenchOptions, BenchResult, register
from egomem.errors import InputError


@register("eval-dialog")
def run(options: BenchOptions) -> BenchResult:
    x = options.extra
    if not x.get("judge"):
        raise InputError("bench eval-dialog needs --set judge=...")
    try:
        from egomem_training.eval import cli_entry as entry
    except ImportError as exc:
        raise InputError(f"the training package is not installed ({exc})") from exc
    opts: dict[str, Any] = {
        "scripts": x.get("scripts"),
        "data": options.data,
        "conversations": x.get("conversations"),
        "roles": x.get("roles"),
        "responder": x.get("responder", "template"),
        "answerer": x.get("answerer"),
        "judge": x["judge"],
        "judge_note": x.get("judge_note", ""),
        "llm": x.get("llm"),
        "sessions": x.get("sessions"),
        "levels": x.get("levels", "1,2"),
        "conditions": x.get("conditions", "product"),
        "per_level": int(x["per_level"]) if x.get("per_level") else None,
        "seed": int(x.get("seed", 0)),
        "threads": int(x.get("threads", 2)),
        "json_path": None,  # the bench writes the result, with its own envelope
        "verbose": False,
        "report": options.report,
    }
    metrics: dict[str, Any] = entry.run(opts)["metrics"]
    rows = [[line] for line in entry.table_lines(metrics)]
    notes = [f"judge: {metrics['judge_limitation']}"]
    return BenchResult("eval-dialog", metrics, [("personalised dialog, LLM-judged", ["result"], rows)], notes)
