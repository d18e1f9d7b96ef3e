"""`egomem memorize FILE`: a long recording into memory, clip by clip, resumable."""

from __future__ import annotations

import json
import signal
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import click

from egomem.cli.live import _CliContext
from egomem.cli.progress import on_terminal, step
from egomem.errors import InputError

if TYPE_CHECKING:
    from egomem.runtime.memorize import Progress as MemorizeProgress


def _started(name: str, prog: MemorizeProgress, spans: list[tuple[float, float]], terminal: bool) -> None:
    """Say what this run does: start, resume (where), or nothing left (on a terminal too)."""
    done = prog.done()
    todo = [i for i in range(len(spans)) if i not in done]
    if not done:
        if not terminal:
            step(f"memorize: {name}: {len(spans)} clip(s) of {prog.clip_s:g} s ({prog.duration_s:.0f} s recording)")
        return
    if not todo:
        click.echo(f"{name}: all {len(spans)} clip(s) memorised already; nothing to do", err=True)
        return
    first = todo[0]
    line = (
        f"resuming {name} at clip {first + 1} of {len(spans)} ({spans[first][0]:.0f} s): "
        f"{len(done)} clip(s) memorised before"
    )
    if terminal:
        click.echo(line, err=True)
    else:
        step(f"memorize: {line}")


def _parse_start(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError as exc:
        raise InputError(f"--start {text!r} is not an ISO date/time (e.g. 2026-05-03T14:00)") from exc


@click.command()
@click.argument("recording", type=click.Path(dir_okay=False))
@click.option("--clip", "clip_s", type=float, default=30.0, show_default=True, help="Clip length in seconds.")
@click.option("--start", help="When the recording began (ISO time; default: file time minus its length).")
@click.option("--stereo-duplex", is_flag=True, help="Left channel = microphone, right = the assistant's speech.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the per-clip report as JSON.")
@click.pass_context
def memorize(
    ctx: click.Context, recording: str, clip_s: float, start: str | None, stereo_duplex: bool, json_path: str | None
) -> None:
    """Memorise a long recording in clips; run it again to resume where it stopped.
    Ctrl-C finishes the clip in progress and stops."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from egomem.runtime.build import Models
    from egomem.runtime.memorize import ClipDone, Memorizer, clip_spans

    c: _CliContext = ctx.find_root().obj
    stopping = False

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True
        click.echo("\nstopping after the clip in progress (Ctrl-C again to abort)", err=True)
        signal.signal(signal.SIGINT, signal.default_int_handler)

    store = c.store()
    previous = signal.signal(signal.SIGINT, stop)
    terminal = on_terminal()
    bar = Progress(
        TextColumn("memorizing"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("clips"),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        disable=not terminal,
    )
    task = bar.add_task("clips", total=None)
    name = Path(recording).name

    def on_clip(prog: MemorizeProgress, clip: ClipDone | None) -> None:
        spans = clip_spans(prog.duration_s, prog.clip_s)
        bar.update(task, total=len(spans), completed=len(prog.clips))
        if clip is None:
            _started(name, prog, spans, terminal)
        elif not terminal:
            step(
                f"memorize: clip {clip.index + 1} of {len(spans)} ({clip.start_s:.0f}-{clip.end_s:.0f} s) done in "
                f"{clip.wall_s:.1f} s: {clip.sessions} session(s), {clip.memory_ops} memory operation(s)"
            )

    try:
        memorizer = Memorizer(c.config, store, Models(c.config), clip_s=clip_s)
        with bar:
            prog = memorizer.run(
                recording,
                origin=_parse_start(start),
                stereo_duplex=stereo_duplex,
                on_clip=on_clip,
                should_stop=lambda: stopping,
            )
    finally:
        signal.signal(signal.SIGINT, previous)
        store.close()
    sessions = sum(cl.sessions for cl in prog.clips)
    ops = sum(cl.memory_ops for cl in prog.clips)
    total = len(clip_spans(prog.duration_s, prog.clip_s))
    minutes = sum(cl.end_s - cl.start_s for cl in prog.clips) / 60
    cpu = sum(cl.cpu_s for cl in prog.clips)
    click.echo(
        f"{len(prog.clips)} of {total} clip(s) of {prog.clip_s:g} s memorised ({prog.duration_s:.0f} s recording), "
        f"{sessions} session(s), {ops} memory operation(s), {cpu / max(minutes, 1e-9):.1f} CPU-s per recorded minute"
    )
    if stopping:
        click.echo("stopped: run the same command again to resume", err=True)
    if json_path:
        with open(json_path, "w") as f:
            json.dump(asdict(prog), f, indent=1)
