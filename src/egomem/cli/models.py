"""`egomem models list|install|verify`: the pretrained weights that come as pip packages."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Protocol

import click

from egomem import weights
from egomem.errors import ConfigError


class _HasDataDir(Protocol):
    @property
    def data_dir(self) -> Path: ...


def _data_dir(ctx: click.Context) -> Path:
    # The CLI's Context object (egomem.cli.main) loads the config lazily.
    config: _HasDataDir = ctx.find_root().obj.config
    return Path(config.data_dir)


def _chosen(names: tuple[str, ...]) -> list[weights.PackagedModel]:
    return [weights.get(n) for n in names] if names else list(weights.MODELS.values())


@click.group()
def models() -> None:
    """Pretrained weights installed from pip packages (assembled and sha256-checked)."""


@models.command("list")
@click.pass_context
def models_list(ctx: click.Context) -> None:
    """Every packaged model: its packages, whether it is assembled and verified, its path."""
    data_dir = _data_dir(ctx)
    for m in weights.MODELS.values():
        missing = weights.missing_packages(m)
        if missing:
            state = f"packages missing ({len(missing)} of {len(m.dists)}, e.g. {missing[0]})"
        elif (ready := weights.ready_path(m.name, data_dir)) is not None:
            # The copy `run` and `serve` load: this data directory's, else the default one's.
            state = f"ready  {ready}"
        else:
            state = "installed packages, not assembled (egomem models install)"
        opt = " (optional)" if m.optional else ""
        click.echo(f"{m.name:<20} {m.kind:<8} {state}{opt}\n{'':<29} {m.description}")


@models.command("install")
@click.argument("names", nargs=-1)
@click.option("--force", is_flag=True, help="Re-assemble and re-hash even when the stamp matches.")
@click.pass_context
def models_install(ctx: click.Context, names: tuple[str, ...], force: bool) -> None:
    """Assemble and verify NAMES (default: every required model, and optional ones whose
    packages are installed). Fast when already done."""
    data_dir = _data_dir(ctx)
    failed = []
    for m in _chosen(names):
        if not names and m.optional and weights.missing_packages(m):
            continue
        t0 = time.perf_counter()
        try:
            if not force and weights.is_ready(m.name, data_dir):
                click.echo(f"{m.name}: ready")
                continue
            path = weights.install(m.name, data_dir, force=force)
            click.echo(f"{m.name}: assembled and verified in {time.perf_counter() - t0:.1f} s -> {path}")
        except ConfigError as exc:
            click.echo(f"{m.name}: {exc}", err=True)
            failed.append(m.name)
    if failed:
        raise ConfigError(f"could not install model(s): {', '.join(failed)}")


@models.command("verify")
@click.argument("names", nargs=-1)
@click.pass_context
def models_verify(ctx: click.Context, names: tuple[str, ...]) -> None:
    """Re-hash NAMES (default: every model whose packages are installed)."""
    data_dir = _data_dir(ctx)
    bad = []
    for m in _chosen(names):
        if not names and weights.missing_packages(m):
            continue
        problems = weights.verify(m.name, data_dir)
        click.echo(f"{m.name}: {'ok' if not problems else '; '.join(problems)}")
        if problems:
            bad.append(m.name)
    if bad:
        raise ConfigError(f"verification failed: {', '.join(bad)}")
