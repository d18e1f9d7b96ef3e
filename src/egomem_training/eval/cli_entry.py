"""What `egomem eval dialog` (egomem/cli/eval.py) calls: options in, the recorded result out."""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from egomem.config import Config, load_config
from egomem.dialog.base import DuplexModel
from egomem.errors import InputError
from egomem.llm.base import LLMProvider
from egomem.providers import BuildContext, create
from egomem.retrieval.encoder import TextEncoder
from egomem_eval.record import Provenance
from egomem_training.data.script import Script, load_script
from egomem_training.eval.dialog import CONDITIONS, TurnResult, as_records, run_eval, select_turns, summarise
from egomem_training.eval.models import ModelSpec, build, check_different, family, parse_spec
from egomem_training.eval.product_memory import ProductMemory

RESPONDERS = ("template", "cascaded")
DEFAULT_CONVERSATIONS = "conv-44,conv-47"  # two LoCoMo test conversations, speaker A the user (docs/eval.md)


def _levels(spec: str) -> tuple[int, ...]:
    try:
        levels = tuple(sorted({int(x) for x in spec.split(",") if x.strip()}))
    except ValueError as exc:
        raise InputError(f"--levels {spec!r}: expected a comma list of 1 and 2") from exc
    if not levels or any(lv not in (1, 2) for lv in levels):
        raise InputError(f"--levels {spec!r}: expected a comma list of 1 and 2")
    return levels


def _conditions(spec: str) -> tuple[str, ...]:
    conds = tuple(c.strip() for c in spec.split(",") if c.strip())
    if not conds or any(c not in CONDITIONS for c in conds):
        raise InputError(f"--conditions {spec!r}: expected a comma list of product, clean, noised")
    return conds


def _responder(kind: str, answerer: ModelSpec | None, threads: int) -> tuple[Callable[[], DuplexModel], str]:
    if kind == "template":
        from egomem.dialog.template import TemplateResponder

        return TemplateResponder, "template responder (no language model)"
    from egomem.dialog.cascaded import CascadedChatModel

    assert answerer is not None
    llm = build(answerer, max_tokens=160, threads=threads)
    return (lambda: CascadedChatModel(llm, temperature=0.0)), f"cascaded, answered by {answerer.label}"


def eval_script(opts: dict[str, Any]) -> tuple[Script, str]:
    """`scripts` when given, else LoCoMo's test conversations built from the data root (`data`)."""
    if opts.get("scripts"):
        return load_script(Path(opts["scripts"])), str(opts["scripts"])
    from egomem_training.data.cli_entry import locomo_script

    loc = {
        "data": opts.get("data"),
        "split": "test",
        "conversations": opts.get("conversations") or DEFAULT_CONVERSATIONS,
        "roles": opts.get("roles") or "a",
    }
    label = f"LoCoMo test {loc['conversations']}, roles {loc['roles']} (built from the data root's locomo/)"
    return locomo_script(loc), label


def _extractor(opts: dict[str, Any]) -> tuple[Config, LLMProvider, str]:
    """The product's configuration and the memory extractor it builds; `llm` overrides the provider."""
    environ = {**os.environ, "EGOMEM_LLM__PROVIDER": str(opts["llm"])} if opts.get("llm") else None
    config = load_config(environ=environ)
    llm = create("llm", config.llm, BuildContext(config.data_dir))
    model = getattr(llm, "model_path", None)
    return config, llm, f"{llm.name}:{Path(model).name}" if model else llm.name


def judge_family_note(judge: ModelSpec, answerer: ModelSpec | None) -> dict[str, Any]:
    """Which family the judge and the answerer are of, and the limitation to print beside the figure."""
    jf = family(judge)
    af = family(answerer) if answerer is not None else None
    same = None if af is None else jf == af
    if same:
        note = (f"the judge ({judge.label}) is of the answerer's model family ({jf}): it may favour answers "
                "like its own; a judge of another family is needed for figures that matter")  # fmt: skip
    elif af is None:
        note = f"the answerer is not a language model (template responder); judge {judge.label} ({jf} family)"
    else:
        note = f"judge {judge.label} ({jf}) and answerer {answerer.label if answerer else ''} ({af}) differ in family"
    return {"judge_family": jf, "answerer_family": af, "judge_same_family": same, "judge_limitation": note}


def run(opts: dict[str, Any], judge_provider: LLMProvider | None = None) -> dict[str, Any]:
    """Check everything that needs no model first (the refusal, the script, the options), then
    load the models and run. `judge_provider` replaces the judge built from `--judge` (tests)."""
    kind = str(opts["responder"])
    if kind not in RESPONDERS:
        raise InputError(f"--responder {kind!r}: expected template or cascaded")
    judge_spec = parse_spec(str(opts["judge"]))
    answerer = parse_spec(str(opts["answerer"])) if opts.get("answerer") else None
    if kind == "cascaded" and answerer is None:
        raise InputError("--responder cascaded needs --answerer local:<model> or openai:<model>@<url>")
    if kind == "template":
        answerer = None  # the template responder has no model: any judge differs from it
    check_different(judge_spec, answerer)
    levels = _levels(str(opts["levels"]))
    conditions = _conditions(str(opts.get("conditions") or "product"))
    script, scripts_label = eval_script(opts)
    turns = select_turns(script, levels, opts.get("per_level"))
    if not turns:
        raise InputError(f"{scripts_label}: no turns of level {', '.join(map(str, levels))} to evaluate")
    provenance = Provenance(Path(opts["json_path"]) if opts.get("json_path") else None)
    t0 = time.perf_counter()
    threads = int(opts.get("threads") or 2)
    memory, extractor = None, None
    if "product" in conditions:
        config, extract_llm, extractor = _extractor(opts)
        sessions = int(opts["sessions"]) if opts.get("sessions") else None
        memory = ProductMemory(script, config, extract_llm, TextEncoder(threads=threads), max_sessions=sessions,
                               report=opts.get("report"))  # fmt: skip
    judge = judge_provider or build(judge_spec, max_tokens=128, threads=threads)
    responder, answered_by = _responder(kind, answerer, threads)

    partial = Path(f"{opts['json_path']}.partial.jsonl") if opts.get("json_path") else None
    if partial is not None:
        partial.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text("", encoding="utf-8")

    judged = [0]
    report = opts.get("report")

    def progress(r: TurnResult) -> None:
        judged[0] += 1
        if report is not None:  # the bench's progress line: a local judge takes a while per turn
            report(f"eval-dialog: {judged[0]} of {len(turns) * len(conditions)} turns answered and judged")
        if partial is not None:  # each judged turn as it comes, for a long run (removed at the end)
            with partial.open("a", encoding="utf-8") as f:
                f.write(json.dumps(as_records([r])[0], ensure_ascii=False) + "\n")
        if opts.get("verbose"):
            print(f"[{r.condition} L{r.level}] {r.said!r} -> {r.answer!r}: {r.fact_score}/{r.answer_quality} "
                  f"{r.judge_failure}", file=sys.stderr, flush=True)  # fmt: skip

    try:
        results = run_eval(script, responder, judge, turns=turns, conditions=conditions, seed=opts["seed"],
                           progress=progress, memory=memory)  # fmt: skip
        remembered = memory.summary() if memory is not None else {}
    finally:
        if memory is not None:
            memory.close()
    metrics = {
        "responder": kind,
        "answered_by": answered_by,
        "judge": judge_spec.label,
        "judge_note": opts.get("judge_note") or "",
        **judge_family_note(judge_spec, answerer),
        # Where the answerer's MemChunks came from, per condition (docs/eval.md).
        "memory": {
            "product": "the product's store (MemoryManager.process) and retrieval (RetrievalProcess)",
            "clean": "oracle: the script's profile and gold facts",
            "noised": "oracle with distractors of other users",
        },
        "extractor": extractor,  # the memory extractor that filled the product's store (None: no product rows)
        "sessions_per_user": int(opts["sessions"]) if opts.get("sessions") else None,
        "remembered": remembered,
        "scripts": scripts_label,
        "threads": int(opts.get("threads") or 2),
        "levels": list(levels),
        "conditions": list(conditions),
        "turns_selected": len(turns),
        "turns_judged": sum(r.fact_score is not None for r in results),
        "judge_failures": sum(r.fact_score is None for r in results),
        "table": summarise(results, seed=opts["seed"]),
        "judge_usage": vars(judge.usage) if hasattr(judge, "usage") else {},
        "turns": as_records(results),
    }
    command = shlex.join(["egomem", *sys.argv[1:]])
    record = {**provenance.envelope("eval-dialog", command, time.perf_counter() - t0), "metrics": metrics}
    if opts.get("json_path"):
        Path(opts["json_path"]).parent.mkdir(parents=True, exist_ok=True)
        Path(opts["json_path"]).write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if partial is not None:
        partial.unlink(missing_ok=True)
    return record


def table_lines(metrics: dict[str, Any]) -> list[str]:
    """The per-level, per-condition table as text."""

    def ci(v: tuple[float, float] | list[float] | None, fmt: str) -> str:
        return "-" if v is None else f"[{fmt.format(v[0])}, {fmt.format(v[1])}]"

    out = [f"{metrics['responder']} ({metrics['answered_by']}); judge {metrics['judge']} {metrics['judge_note']}"]
    if metrics.get("judge_limitation"):
        out.append(f"judge: {metrics['judge_limitation']}")
    if metrics.get("extractor"):
        out.append(f"product memory written by the {metrics['extractor']} extractor")
    out.append(
        f"{'level/condition':18} {'turns':>5} {'judged':>6} {'fact':>5} {'95% CI':>14} {'quality':>7} {'95% CI':>12}"
    )
    for key, row in metrics["table"].items():
        fact = "-" if row["fact_score"] is None else f"{row['fact_score']:.2f}"
        qual = "-" if row["answer_quality"] is None else f"{row['answer_quality']:.1f}"
        fact_ci, qual_ci = ci(row["fact_score_ci95"], "{:.2f}"), ci(row["answer_quality_ci95"], "{:.1f}")
        out.append(f"{key:18} {row['turns']:5d} {row['judged']:6d} {fact:>5} {fact_ci:>14} {qual:>7} {qual_ci:>12}")
    return out
