"""What `egomem data build` (egomem/cli/data.py) calls: options in, manifest out."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from egomem.errors import InputError
from egomem_training.data.build import BuildConfig, build
from egomem_training.data.script import Script, load_script, write_jsonl

if TYPE_CHECKING:
    from egomem_eval.locomo import Conversation


def run(
    script: Path, out: Path, opts: dict[str, Any], on_stream: Callable[[int, int], None] | None = None
) -> dict[str, Any]:
    cfg = BuildConfig(
        seed=opts["seed"],
        max_steps=opts["max_steps"],
        shard_size=opts["shard_size"],
        sessions_per_stream=opts["sessions_per_stream"],
        assistant_voice=opts["assistant_voice"],
        user_engines=tuple(e.strip() for e in str(opts["user_engines"]).split(",") if e.strip()),
        text_tokenizer=opts["text_tokenizer"],
        audio_tokenizer=opts["audio_tokenizer"],
        mimi_weights=opts["mimi_weights"],
        picture=not opts["no_picture"],
    )
    manifest, _ = build(load_script(script), out, cfg, on_stream=on_stream)
    return manifest


def from_convo(split: str, seeds: list[int], out: Path) -> dict[str, Any]:
    from egomem_training.data.from_convo import script_from_convo

    script = script_from_convo(split, seeds)
    write_jsonl(script, out)
    turns = [t for s in script.sessions for t in s.turns]
    return {
        "users": len(script.users),
        "sessions": len(script.sessions),
        "turns": len(turns),
        "level2_turns": sum(t.level == 2 for t in turns),
        "out": str(out),
    }


def from_locomo(opts: dict[str, Any]) -> dict[str, Any]:
    chosen = locomo_conversations(opts)
    script = locomo_script(opts, chosen)
    write_jsonl(script, opts["out"])
    turns = [t for s in script.sessions for t in s.turns]
    return {
        "conversations": [c.sample_id for c in chosen],
        "users": len(script.users),
        "sessions": len(script.sessions),
        "turns": len(turns),
        "level1_turns": sum(t.level == 1 for t in turns),
        "level2_turns": sum(t.level == 2 for t in turns),
        "generated_lines": sum(t.generated_by is not None for t in turns),
        "licence": "CC BY-NC 4.0 (LoCoMo): non-commercial use only",
        "out": str(opts["out"]),
    }


def locomo_conversations(opts: dict[str, Any]) -> list[Conversation]:
    """LoCoMo's conversations of `split` (and `conversations`, if given) from `data` or the data root."""
    from egomem_eval.data import data_root
    from egomem_eval.locomo import load_locomo
    from egomem_training.data.from_locomo import split_range

    convs, _ = load_locomo(Path(opts["data"]) if opts.get("data") else data_root(None, "locomo"))
    chosen = [c for i, c in enumerate(convs) if i in split_range(opts["split"])]
    if opts.get("conversations"):
        wanted = [x.strip() for x in str(opts["conversations"]).split(",") if x.strip()]
        unknown = sorted(set(wanted) - {c.sample_id for c in chosen})
        if unknown:
            raise InputError(f"--conversations: {', '.join(unknown)} not in the {opts['split']} split")
        chosen = [c for c in chosen if c.sample_id in wanted]
    return chosen


def locomo_script(opts: dict[str, Any], chosen: list[Conversation] | None = None) -> Script:
    """The script of `data convert locomo` (options `data`, `split`, `conversations`, `roles`,
    `max_questions`, `llm_answers`): also what `bench eval-dialog` evaluates when it is given no
    scripts file."""
    from egomem_training.data.from_locomo import LocomoOptions, llm_writer, script_from_locomo

    chosen = locomo_conversations(opts) if chosen is None else chosen
    writer, writer_name = None, ""
    if opts.get("llm_answers"):
        from egomem_training.eval.models import build, parse_spec

        spec = parse_spec(opts["llm_answers"])
        writer, writer_name = llm_writer(build(spec, max_tokens=80)), spec.label
    options = LocomoOptions(roles=opts["roles"], max_questions=opts.get("max_questions"))
    return script_from_locomo(chosen, options, writer=writer, writer_name=writer_name)
