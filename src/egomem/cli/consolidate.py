"""`egomem consolidate`: the sleep-time pass (consolidation and key retention) run by hand."""

from __future__ import annotations

import json
import time
from typing import Protocol

import click

from egomem.config import Config
from egomem.store import MemoryStore


class _CliContext(Protocol):
    @property
    def config(self) -> Config: ...

    def store(self) -> MemoryStore: ...


@click.command()
@click.option("--dry-run", is_flag=True, help="Report what would be folded, merged, faded and deleted; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def consolidate(ctx: click.Context, dry_run: bool, as_json: bool) -> None:
    """Fold old summaries, merge duplicates, fade weak facts, delete expired face and voice keys.

    The same pass that `egomem live` and `egomem serve` run when the device is idle
    (docs/memory.md). Run it while no `egomem live` writes to the same store."""
    from egomem.memory.sleep_time import sleep_pass
    from egomem.retrieval.encoder import default_encoder

    c: _CliContext = ctx.find_root().obj
    store = c.store()
    try:
        names = {u.id: u.name or u.id for u in store.list_users()}
        report = sleep_pass(
            store, default_encoder(), c.config.memory, c.config.retention, now=time.time(), dry_run=dry_run,
            held_s=c.config.identity.unsure_hold_s,
        )  # fmt: skip
    finally:
        store.close()
    if as_json:
        people = {
            names.get(uid, uid): {"merged": r.merges, "folded": r.folded, "faded": [t for t, _ in r.faded]}
            for uid, r in report.consolidated.items()
            if r.changed
        }
        keys = [
            {"person": e.name, "user_id": e.user_id, "modality": e.modality.value, "keys": len(e.key_ids)}
            for e in (report.retention.expired if report.retention else [])
        ]
        click.echo(json.dumps({"dry_run": dry_run, "people": people, "keys_deleted": keys}, indent=2))
        return
    for line in report.lines(lambda uid: names.get(uid, uid)):
        click.echo(line)
    consolidated = report.consolidated.values()
    folded, merged, faded = (sum(getattr(r, a) for r in consolidated) for a in ("summaries_folded", "merged", "purged"))
    keys_n = report.retention.keys if report.retention else 0
    head = "dry run, nothing changed: " if dry_run else ""
    click.echo(
        f"{head}{len(report.consolidated)} person(s); summaries folded: {folded}, duplicates merged: {merged}, "
        f"facts faded: {faded}, biometric keys deleted: {keys_n}"
    )
