"""`egomem data build`: a dialog script to sharded training samples (docs/data.md).

Streams take the script's sessions in order, `sessions_per_stream` at a time; each is
built by stream.build_stream and written by shards.ShardWriter. Beside the shards:
`manifest.json` (config, counts, the audio tokenizer and why), `tokenizer.json` (what the
text ids mean) and `stream-000000.png` (the first stream drawn, for people to check).
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from egomem.errors import InputError
from egomem_training.data.audio import AugmentConfig, LineCache, assistant_synthesizer, user_voice_pool
from egomem_training.data.audio_tokens import make_audio_tokenizer
from egomem_training.data.layout import DIALOG_START, level1_text
from egomem_training.data.script import Script
from egomem_training.data.shards import ShardWriter
from egomem_training.data.stream import BuiltStream, build_stream
from egomem_training.data.text_tokens import make_text_tokenizer, save_tokenizer

MANIFEST_VERSION = 1


class BuildConfig(BaseModel):
    seed: int = 0
    max_steps: int = Field(default=8192, gt=DIALOG_START)
    shard_size: int = Field(default=64, ge=1)  # streams per shard
    sessions_per_stream: int = Field(default=3, ge=1)
    assistant_voice: str = "piper"  # piper (joe) | espeak-ng
    user_engines: tuple[str, ...] = ("festival", "espeak-ng")
    text_tokenizer: str = "words"  # words | bytes | path of a tokenizers .json
    audio_tokenizer: str = "auto"  # auto | mimi | logmel
    mimi_weights: Path | None = None
    augment: AugmentConfig = Field(default_factory=AugmentConfig)
    picture: bool = True


def build(
    script: Script,
    out: Path,
    cfg: BuildConfig,
    keep: bool = False,
    on_stream: Callable[[int, int], None] | None = None,
) -> tuple[dict[str, Any], list[BuiltStream]]:
    """Write the shards under `out`; returns the manifest (and the built streams when `keep`).
    `on_stream(done, total)` is told once the tokenizers and voices are ready (done 0) and after
    each stream (`egomem data build` shows it as progress)."""
    out.mkdir(parents=True, exist_ok=True)
    if any(out.glob("streams-*.parquet")):
        raise InputError(f"{out} already holds shards: choose an empty folder")
    t0 = time.monotonic()
    texts = [x for s in script.sessions for t in s.turns for x in (t.user, t.assistant, *t.facts)]
    texts += [" ".join(t.retr.relations + t.retr.keywords) for s in script.sessions for t in s.turns if t.retr]
    texts += [":", *(level1_text(u) for u in script.users)]  # ":" is the query frame's own word
    text_tok = make_text_tokenizer(cfg.text_tokenizer, texts)
    audio_tok, audio_note = make_audio_tokenizer(cfg.audio_tokenizer, cfg.mimi_weights)
    pool = user_voice_pool(cfg.user_engines)
    writer = ShardWriter(out, text_tok, cfg.shard_size)
    groups = [
        script.sessions[i : i + cfg.sessions_per_stream]
        for i in range(0, len(script.sessions), cfg.sessions_per_stream)
    ]
    kept: list[BuiltStream] = []
    if on_stream is not None:
        on_stream(0, len(groups))
    with tempfile.TemporaryDirectory(prefix="egomem-data-") as tmp:
        lines = LineCache(Path(tmp), assistant_synthesizer(cfg.assistant_voice))
        for i, group in enumerate(groups):
            st = build_stream(
                i,
                cfg.seed,
                group,
                script,
                pool=pool,
                lines=lines,
                text_tok=text_tok,
                audio_tok=audio_tok,
                augment_cfg=cfg.augment,
                max_steps=cfg.max_steps,
            )
            writer.add(st)
            if i == 0 and cfg.picture:
                try:
                    from egomem_training.data.picture import draw_stream  # matplotlib loads only here
                except ImportError as exc:
                    raise InputError(
                        f"the stream picture needs matplotlib ({exc}): pip install 'egomem[training]', or --no-picture"
                    ) from exc

                draw_stream(st, out / f"stream-{st.stream_id[1:]}.png", text_tok)
            if keep:
                kept.append(st)
            if on_stream is not None:
                on_stream(i + 1, len(groups))
    writer.flush()
    save_tokenizer(text_tok, out / "tokenizer.json")
    manifest = {
        "version": MANIFEST_VERSION,
        "config": json.loads(cfg.model_dump_json()),
        "streams": len(groups),
        "samples": writer.counts,
        "shards": writer.shards,
        "audio_tokenizer": {"name": audio_tok.name, "n_codebooks": audio_tok.n_codebooks, "note": audio_note},
        "text_tokenizer": {"name": text_tok.name, "vocab_size": text_tok.vocab_size},
        "assistant_voice": cfg.assistant_voice,
        "voice_pool": [v.id for v in pool],
        "seconds": round(time.monotonic() - t0, 1),
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return manifest, kept
