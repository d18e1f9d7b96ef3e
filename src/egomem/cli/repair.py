"""`egomem users merge | split | undo | repairs`: repair identity mistakes, undoably (store/ops/repair.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Protocol

import click

from egomem.errors import NotFoundError
from egomem.schemas import Repair
from egomem.store.base import MemoryStore
from egomem.store.db import MAX_ROW_ID

# The store's row-id range at the interface: a number outside it is a usage error.
ROW_ID = click.IntRange(1, MAX_ROW_ID)


class _StoreOpener(Protocol):
    def store(self) -> MemoryStore: ...


@contextmanager
def _store() -> Iterator[MemoryStore]:
    opener: _StoreOpener = click.get_current_context().find_root().obj
    store = opener.store()
    try:
        yield store
    finally:
        store.close()


def _who(store: MemoryStore, user_id: str) -> str:
    try:
        name = store.get_user(user_id).name
    except NotFoundError:  # a person removed since (merged into another) is named by id
        name = None
    return f"{name} ({user_id})" if name else user_id


def describe(store: MemoryStore, r: Repair) -> str:
    """One line: what the repair did, and whether it was undone."""
    when = datetime.fromtimestamp(r.at, UTC).strftime("%Y-%m-%d %H:%M")
    moved = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in r.moved.items() if v)
    if r.kind == "merge":
        merged = f"{r.other_name} ({r.other_user_id})" if r.other_name else _who(store, r.other_user_id)
        what = f"merged {merged} into {_who(store, r.user_id)}"
    else:
        what = f"split {', '.join(r.episodes)} from {_who(store, r.user_id)} to {_who(store, r.other_user_id)}"
    undone = "  [undone]" if r.undone_at is not None else ""
    return f"repair {r.id}  {when}  {what}: {moved or 'nothing moved'}{undone}"


@click.command("merge")
@click.argument("keep_id")
@click.argument("other_id")
def merge(keep_id: str, other_id: str) -> None:
    """Merge OTHER_ID into KEEP_ID (one person seen as two): keys, facts, relations, episodes. Undoable."""
    with _store() as store:
        repair = store.merge_people(keep_id, other_id, cause="cli merge")
        click.echo(describe(store, repair))
        click.echo(f"undo with: egomem users undo {repair.id}")


@click.command("split")
@click.argument("user_id")
@click.option(
    "--episode",
    "episodes",
    multiple=True,
    required=True,
    help="An episode of USER_ID that is another person's (repeat).",
)
@click.option("--into", "into", help="Give them to this existing person instead of a new one.")
@click.option("--name", help="The new person's name.")
@click.option("--key", "keys", multiple=True, type=ROW_ID, help="Also move this identity key (repeat; see users show).")
def split(user_id: str, episodes: tuple[str, ...], into: str | None, name: str | None, keys: tuple[int, ...]) -> None:
    """Split another person out of USER_ID (two people seen as one): the episodes named, and by their
    provenance the facts, relations and keys learnt from them, go to a new person (or --into one).
    What those episodes replaced or retracted of USER_ID's memory is current again. Undoable."""
    with _store() as store:
        repair = store.split_user(user_id, list(episodes), into=into, name=name, key_ids=list(keys), cause="cli split")
        click.echo(describe(store, repair))
        click.echo(f"undo with: egomem users undo {repair.id}")


@click.command("undo")
@click.argument("repair_id", type=ROW_ID)
def undo(repair_id: int) -> None:
    """Undo a merge or split: every row it changed goes back as it was (refused if changed since)."""
    with _store() as store:
        repair = store.undo_repair(repair_id, cause="cli undo")
        click.echo(f"undone: {describe(store, repair)}")


@click.command("repairs")
@click.argument("user_id", required=False)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def repairs(user_id: str | None, as_json: bool) -> None:
    """The merges and splits made (of USER_ID, or all), newest last."""
    with _store() as store:
        if user_id is not None:
            store.get_user(user_id)
        rows = store.list_repairs(user_id)
        if as_json:
            click.echo(json.dumps([r.model_dump() for r in rows], indent=2))
            return
        if not rows:
            click.echo("no repairs")
        for r in rows:
            click.echo(describe(store, r))
