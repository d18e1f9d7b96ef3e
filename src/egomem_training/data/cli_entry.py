"""What `egomem data build` (egomem/cli/data.py) calls: options in, manifest out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from egomem_training.data.build import BuildConfig, build
from egomem_training.data.script import load_script, write_jsonl


def run(script: Path, out: Path, opts: dict[str, Any]) -> dict[str, Any]:
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
    manifest, _ = build(load_script(script), out, cfg)
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
