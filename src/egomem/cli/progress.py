"""Progress for long commands: a rich bar on a terminal, timestamped step lines when stderr is
piped or logged (a bar's redraws would be noise in a log file, and it shows nothing until done)."""

from __future__ import annotations

import sys
from datetime import datetime

import click


def on_terminal() -> bool:
    return sys.stderr.isatty()


def step(text: str) -> None:
    """One progress line on stderr: `2026-05-03T14:02:11 <text>`."""
    click.echo(f"{datetime.now().isoformat(timespec='seconds')} {text}", err=True)
