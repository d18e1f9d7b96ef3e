"""`egomem tenants`: tenants (a home or a fleet) and their API keys.

A key is printed once, with what it grants and its key id; afterwards only the key id (a prefix
of its SHA-256) names it, in `list`, `revoke` and `rotate`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

import click

from egomem.cli.live import _CliContext
from egomem.server.tenants import KEY_GRANTS, TenantRegistry, key_id


@contextmanager
def _registry() -> Iterator[TenantRegistry]:
    c: _CliContext = click.get_current_context().find_root().obj
    reg = TenantRegistry(c.config)
    try:
        yield reg
    finally:
        reg.close()


def _when(t: float) -> str:
    return datetime.fromtimestamp(t).strftime("%Y-%m-%d %H:%M")


def _show_key(tenant_id: str, key: str, as_json: bool, revoked: list[str] | None = None) -> None:
    grants = KEY_GRANTS.format(tenant=tenant_id)
    if as_json:
        out: dict[str, object] = {"tenant": tenant_id, "key": key, "key_id": key_id(key), "grants": grants}
        if revoked is not None:
            out["revoked"] = revoked
        click.echo(json.dumps(out))
        return
    click.echo(f"tenant:  {tenant_id}\nkey:     {key}\nkey id:  {key_id(key)}\ngrants:  {grants}")
    if revoked:
        click.echo(f"revoked: {', '.join(revoked)}")
    click.echo(
        "This key is shown once (only its hash is kept): store it now. "
        f"Revoke it with `egomem tenants revoke {tenant_id} {key_id(key)}`."
    )


_JSON = click.option("--json", "as_json", is_flag=True, help="Print the key as one JSON object (for scripts).")


@click.group()
def tenants() -> None:
    """Tenants (a home or a fleet) and their API keys."""


@tenants.command("add")
@click.argument("tenant_id")
@_JSON
def tenants_add(tenant_id: str, as_json: bool) -> None:
    """Create a tenant and print its first API key (shown once; only a hash is kept)."""
    with _registry() as reg:
        _, key = reg.create(tenant_id)
    _show_key(tenant_id, key, as_json)


@tenants.command("key")
@click.argument("tenant_id")
@_JSON
def tenants_key(tenant_id: str, as_json: bool) -> None:
    """Issue another API key for a tenant (the older ones keep working)."""
    with _registry() as reg:
        key = reg.new_key(tenant_id)
    _show_key(tenant_id, key, as_json)


@tenants.command("list")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def tenants_list(as_json: bool) -> None:
    """Every tenant with its keys (key id and creation time; never the keys themselves)."""
    with _registry() as reg:
        rows = [(t, reg.keys(t.id)) for t in reg.list()]
    if as_json:
        out = [
            {
                "tenant": t.id,
                "created_at": t.created_at,
                "keys": [{"key_id": k.key_id, "label": k.label, "created_at": k.created_at} for k in keys],
            }
            for t, keys in rows
        ]
        click.echo(json.dumps(out, indent=2))
        return
    if not rows:
        click.echo("no tenants (create one with `egomem tenants add NAME`)")
        return
    click.echo(f"{'TENANT':<20} {'CREATED':<17} {'KEY ID':<13} KEY CREATED")
    for t, keys in rows:
        if not keys:
            click.echo(f"{t.id:<20} {_when(t.created_at):<17} {'(no key)':<13}")
        for i, k in enumerate(keys):
            head = f"{t.id:<20} {_when(t.created_at):<17}" if i == 0 else " " * 38
            click.echo(f"{head} {k.key_id:<13} {_when(k.created_at)}{'  ' + k.label if k.label else ''}")


@tenants.command("revoke")
@click.argument("tenant_id")
@click.argument("key")
def tenants_revoke(tenant_id: str, key: str) -> None:
    """Revoke one of a tenant's keys, named by its key id (`tenants list`) or by the key itself."""
    with _registry() as reg:
        info = reg.revoke(tenant_id, key)
        left = len(reg.keys(tenant_id))
    click.echo(f"revoked key {info.key_id} of tenant {tenant_id}; {left} key(s) left")


@tenants.command("rotate")
@click.argument("tenant_id")
@_JSON
def tenants_rotate(tenant_id: str, as_json: bool) -> None:
    """Issue a new key for a tenant and revoke all its older keys at once."""
    with _registry() as reg:
        key, old = reg.rotate(tenant_id)
    _show_key(tenant_id, key, as_json, revoked=[k.key_id for k in old])
