"""`egomem data build`: training samples for a memory-aware full-duplex model (docs/data.md).

The builder lives in the training package (egomem_training.data): the CLI is the one layer
of `egomem` that imports it (import-linter), inside the commands, so only `egomem data`
loads it and its `training` extra (pyarrow, matplotlib).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from egomem.cli.progress import Counted, on_terminal, step
from egomem.errors import InputError


@click.group()
def data() -> None:
    """Training data for a memory-aware full-duplex dialog model."""


@data.command("build")
@click.argument("script", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path), help="Output folder (empty)."
)
@click.option("--seed", default=0, show_default=True, help="Seed of every random choice.")
@click.option("--max-steps", default=8192, show_default=True, help="Stream length in 80 ms steps (MemChunks included).")
@click.option("--shard-size", default=64, show_default=True, help="Streams per Parquet shard.")
@click.option("--sessions-per-stream", default=3, show_default=True)
@click.option("--assistant-voice", type=click.Choice(["piper", "espeak-ng"]), default="piper", show_default=True)
@click.option(
    "--user-engines", default="festival,espeak-ng", show_default=True, help="TTS engines of the users' voices."
)
@click.option("--text-tokenizer", default="words", show_default=True, help="words, bytes, or a tokenizers .json file.")
@click.option("--audio-tokenizer", type=click.Choice(["auto", "mimi", "logmel"]), default="auto", show_default=True)
@click.option(
    "--mimi", "mimi_weights", type=click.Path(dir_okay=False, path_type=Path), help="Local Mimi weights file."
)
@click.option("--no-picture", is_flag=True, help="Skip the PNG of the first stream.")
def build(script: Path, out: Path, **opts: object) -> None:
    """Turn a dialog SCRIPT (.json or .jsonl) into sharded Parquet samples under --out."""
    try:
        from egomem_training.data import cli_entry as entry
    except ImportError as exc:
        raise InputError(f"the training extra is not installed: pip install 'egomem[training]' ({exc})") from exc
    bar: list[Counted] = []

    def on_stream(done: int, total: int) -> None:
        if not bar:
            bar.append(Counted("data build", "stream(s)", total))
        bar[0].advance(done - bar[0].done)

    if not on_terminal():
        step(f"data build: {script.name}: preparing the tokenizers and voices")
    try:
        manifest = entry.run(script, out, opts, on_stream)
    finally:
        if bar:
            bar[0].close()
    click.echo(
        json.dumps({k: manifest[k] for k in ("streams", "samples", "shards", "audio_tokenizer", "seconds")}, indent=2)
    )


def _seeds(spec: str) -> list[int]:
    """`0:20` (a range, end excluded) or `1,4,7`."""
    try:
        if ":" in spec:
            a, b = spec.split(":", 1)
            return list(range(int(a), int(b)))
        return [int(x) for x in spec.split(",") if x.strip()]
    except ValueError as exc:
        raise InputError(f"--seeds {spec!r}: expected A:B or a comma list of integers") from exc


@data.command("from-convo")
@click.option(
    "--split",
    type=click.Choice(["dev", "test"]),
    default="dev",
    show_default=True,
    help="Scenario split (test is the benchmark's: keep it out of training).",
)
@click.option("--seeds", default="0:20", show_default=True, help="Scenario seeds: A:B or a comma list.")
@click.option(
    "--out", "out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="Script .jsonl to write."
)
def from_convo(split: str, seeds: str, out: Path) -> None:
    """A script from the conversation benchmark's generator (day-2 sessions; docs/data.md)."""
    from egomem_training.data import cli_entry as entry

    click.echo(json.dumps(entry.from_convo(split, _seeds(seeds), out), indent=2))


@data.group("convert")
def convert() -> None:
    """Scripts from real conversation corpora (docs/data.md)."""


@convert.command("locomo")
@click.option(
    "--split",
    type=click.Choice(["dev", "test", "all"]),
    default="dev",
    show_default=True,
    help="Conversations 1-5 (dev) or 6-10 (test: the benchmarks'; keep it out of training).",
)
@click.option("--conversations", help="Only these sample ids of the split (e.g. conv-44,conv-47).")
@click.option(
    "--roles", type=click.Choice(["a", "b", "both"]), default="both", show_default=True, help="Who is the user."
)
@click.option("--max-questions", type=int, default=None, help="Question turns per user (default: all usable).")
@click.option("--llm-answers", help="local:<model> or openai:<model>@<url> writes the question turns' answers.")
@click.option("--data", type=click.Path(exists=True, path_type=Path), help="LoCoMo folder or locomo10.json.")
@click.option(
    "--out", "out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="Script .jsonl to write."
)
def convert_locomo(**opts: object) -> None:
    """A script from LoCoMo (CC BY-NC 4.0): each speaker in turn as the user, QA as level-1/2 turns."""
    from egomem_training.data import cli_entry as entry

    click.echo(json.dumps(entry.from_locomo(opts), indent=2))
