"""`egomem live`: the agent on the default camera and microphone, in real time."""

from __future__ import annotations

import signal
from types import FrameType
from typing import TYPE_CHECKING, Protocol

import click

from egomem.config import Config
from egomem.store import MemoryStore

if TYPE_CHECKING:
    from egomem.memory.sleep_time import SleepScheduler


class _CliContext(Protocol):
    @property
    def config(self) -> Config: ...

    def store(self) -> MemoryStore: ...


def live_sleep(config: Config, store: MemoryStore) -> SleepScheduler | None:
    """Sleep-time work while the device idles (memory/sleep_time.py), ticking in a thread; None when off.

    Expired keys are deleted once before the agent starts too: the identifier loads the keys into
    its in-process index when it is built, so keys a later pass deletes stop being recognised only
    at the next start (the store has them deleted at once)."""
    import time

    from egomem.memory import retention
    from egomem.memory.sleep_time import scheduler_for
    from egomem.retrieval.encoder import default_encoder

    sleep = scheduler_for(store, default_encoder, config)
    if sleep is not None:
        retention.apply(store, config.retention, now=time.time())
        sleep.start()
    return sleep


@click.command()
@click.option("--list-devices", is_flag=True, help="List cameras and microphones, then exit.")
@click.option("--camera", default="/dev/video0", show_default=True, help="/dev/videoN, FORMAT:URL, or none.")
@click.option("--mic", default="alsa:default", show_default=True, help="An ALSA name (hw:1,0), FORMAT:URL, or none.")
@click.option("--speaker", default="none", show_default=True, help="Loopback of the loudspeaker: the speaking channel.")
@click.option("--max-backlog", type=float, default=5.0, show_default=True, help="Seconds of audio kept waiting.")
@click.option("--duration", type=float, help="Stop after this many seconds (default: until Ctrl-C).")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the timeline and summary as JSON.")
@click.option("--quiet", is_flag=True, help="No timeline, only the summary.")
@click.pass_context
def live(
    ctx: click.Context,
    list_devices: bool,
    camera: str,
    mic: str,
    speaker: str,
    max_backlog: float,
    duration: float | None,
    json_path: str | None,
    quiet: bool,
) -> None:
    """Run on a live camera and microphone. Ctrl-C finishes the open session and stops."""
    from egomem.cli.agent_run import run_agent
    from egomem.stream import live as devices

    if list_devices:
        found = devices.list_devices()
        for d in found:
            click.echo(f"{d.kind:<10} {d.spec:<16} {d.name}")
        if not found:
            click.echo("no camera or microphone found (/dev/video*, /proc/asound)")
        return
    c: _CliContext = ctx.find_root().obj
    source = devices.LiveSource(
        devices.parse_device(mic, "microphone"),
        devices.parse_device(camera, "camera"),
        devices.parse_device(speaker, "speaker"),
        fps=c.config.runtime.video_fps,
        max_backlog_s=max_backlog,
        duration_s=duration,
    )

    def stop(signum: int, frame: FrameType | None) -> None:
        # The first Ctrl-C ends the stream (the agent then closes the open session and
        # writes its memory); a second one interrupts as usual.
        click.echo("\nstopping: finishing the open session (Ctrl-C again to abort)", err=True)
        source.close()
        signal.signal(signal.SIGINT, signal.default_int_handler)

    store = c.store()
    sleep = live_sleep(c.config, store)
    previous = signal.signal(signal.SIGINT, stop)
    try:
        run_agent(
            c.config,
            store,
            source.steps(),
            source=f"live {mic} + {camera}",
            lockstep=False,
            quiet=quiet,
            json_path=json_path,
            on_event=None if sleep is None else lambda ev: None if ev.type == "warning" else sleep.activity(),
            command="live",  # consent: `ask` unless [privacy] consent says otherwise
        )
    finally:
        signal.signal(signal.SIGINT, previous)
        if sleep is not None:
            sleep.stop()
        store.close()
    s = source.stats
    click.echo(
        f"live input: {s.steps} steps, {s.frames_received} frames kept, {s.frames_dropped} frames and "
        f"{s.audio_dropped_s:.1f} s of audio dropped under back-pressure"
    )
    for w in s.warnings:
        click.echo(f"warning: {w}", err=True)
