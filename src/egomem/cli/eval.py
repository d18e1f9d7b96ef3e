"""`egomem eval dialog`: personalised dialog judged by an LLM (Fact Score, Answer Quality; docs/eval.md).

The evaluation reads dialog scripts, whose format belongs to the training package
(egomem_training): like `egomem data`, it is imported inside the command, so only this
command loads it.
"""

from __future__ import annotations

from pathlib import Path

import click

from egomem.errors import InputError


@click.group("eval")
def eval_group() -> None:
    """Evaluations of the dialog layer."""


@eval_group.command("dialog")
@click.option(
    "--scripts",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Script .json/.jsonl (default: LoCoMo's test conversations conv-44, conv-47 built from --data).",
)
@click.option("--data", type=click.Path(path_type=Path), help="LoCoMo's folder (default: the data root's locomo/).")
@click.option("--conversations", help="LoCoMo test conversations without --scripts (default conv-44,conv-47).")
@click.option("--roles", type=click.Choice(["a", "b", "both"]), help="Which LoCoMo speaker is the user (default a).")
@click.option("--responder", type=click.Choice(["template", "cascaded"]), default="template", show_default=True)
@click.option("--answerer", help="The cascaded responder's model: local:<model> or openai:<model>@<base_url>.")
@click.option("--judge", required=True, help="local:<model> or openai:<model>@<base_url> (key: $EGOMEM_EVAL_API_KEY).")
@click.option("--judge-note", default="", help="A label kept with the figures (e.g. '1.5B judge: a weak judge').")
@click.option("--levels", default="1,2", show_default=True, help="Turn levels to evaluate.")
@click.option(
    "--conditions",
    default="product",
    show_default=True,
    help="Where the MemChunks come from: product (the product's store and retrieval), clean, noised (oracles).",
)
@click.option("--llm", help="The product's memory extractor (default: the configuration's; rules is fast).")
@click.option("--sessions", type=int, help="Memorise at most this many earlier sessions per user (the latest).")
@click.option("--per-level", type=int, default=None, help="At most this many turns per level (round-robin over users).")
@click.option("--seed", default=0, show_default=True)
@click.option("--threads", default=2, show_default=True, help="CPU threads of a local model.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), help="Write the result here.")
@click.option("-v", "--verbose", is_flag=True, help="Print every judged turn to stderr.")
def dialog(**opts: object) -> None:
    """Answer the memory turns of --scripts with a responder and score them with an LLM judge."""
    try:
        from egomem_training.eval import cli_entry as entry
    except ImportError as exc:
        raise InputError(f"the training package is not installed ({exc})") from exc
    record = entry.run(opts)
    for line in entry.table_lines(record["metrics"]):
        click.echo(line)
