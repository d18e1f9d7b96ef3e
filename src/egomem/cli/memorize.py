"""`egomem memorize FILE`: a long recording into memory, clip by clip, resumable."""

from __future__ import annotations

import json
import signal
from dataclasses import asdict
from datetime import datetime
from types import FrameType

import click

from egomem.cli.live import _CliContext
from egomem.errors import InputError


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
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from egomem.runtime.build import Models
    from egomem.runtime.memorize import ClipDone, Memorizer, clip_spans
    from egomem.runtime.memorize import Progress as MemorizeProgress

    c: _CliContext = ctx.find_root().obj
    stopping = False

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True
        click.echo("\nstopping after the clip in progress (Ctrl-C again to abort)", err=True)
        signal.signal(signal.SIGINT, signal.default_int_handler)

    store = c.store()
    previous = signal.signal(signal.SIGINT, stop)
    bar = Progress(
        TextColumn("memorizing"), BarColumn(), MofNCompleteColumn(), TextColumn("clips"), TimeRemainingColumn()
    )
    task = bar.add_task("clips", total=None)

    def on_clip(prog: MemorizeProgress, clip: ClipDone | None) -> None:
        bar.update(task, total=len(clip_spans(prog.duration_s, prog.clip_s)), completed=len(prog.clips))

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
        f"{len(prog.clips)} of {total} clip(s) of {prog.duration_s:.0f} s memorised, {sessions} session(s), "
        f"{ops} memory operation(s), {cpu / max(minutes, 1e-9):.1f} CPU-s per recorded minute"
    )
    if stopping:
        click.echo("stopped: run the same command again to resume", err=True)
    if json_path:
        with open(json_path, "w") as f:
            json.dump(asdict(prog), f, indent=1)
