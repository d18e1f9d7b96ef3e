"""Running the agent over a stream of steps and reporting it: shared by `egomem run`
(a recording) and `egomem live` (devices)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from egomem.cli.progress import on_terminal, step, tenths
from egomem.config import Config
from egomem.runtime.timeline import Event
from egomem.store import MemoryStore

if TYPE_CHECKING:
    from egomem.runtime.agent import EgoMem
from egomem.stream.sources import Step


def step_lines(steps: Iterator[Step], length: int) -> Iterator[Step]:
    """`steps`, with a timestamped line on stderr at each tenth of `length` (piped progress)."""
    return tenths(steps, length, lambda f, s: f"run: {f:.0%} of the recording processed ({s:.1f} s)")


def run_agent(
    config: Config,
    store: MemoryStore,
    steps: Iterator[Step],
    *,
    source: str,
    lockstep: bool,
    quiet: bool,
    json_path: str | None,
    length: int | None = None,
    after: Callable[[], dict[str, Any]] | None = None,
    on_event: Callable[[Event], None] | None = None,
    command: str = "run",
    on_agent: Callable[[EgoMem], None] | None = None,
) -> dict[str, Any]:
    """Feed `steps` through a freshly built agent, print the timeline (unless quiet) and
    a summary; returns the summary (also written with the events to `json_path`). `after`
    runs once the summary is printed; what it returns goes into the JSON too (`run --people`).
    `on_event` hears every timeline event as it happens and `on_agent` gets the agent once built
    (`live`'s sleep-time schedule)."""
    from egomem.runtime.build import Models, Services, build_agent
    from egomem.runtime.demo import memory_snapshot, name_resolver, write_json
    from egomem.runtime.timeline import Timeline, format_event

    timeline = Timeline()
    if on_event is not None:
        timeline.subscribe(on_event)
    name_of = name_resolver(store)
    if not quiet:
        timeline.subscribe(lambda ev: click.echo(format_event(ev, name_of)))
    models = Models(config)
    terminal = on_terminal()
    if length is not None:  # a recording: load the models first, saying so (a live source would back up meanwhile)
        say = (lambda text: click.echo(text, err=True)) if terminal else step
        models.load_all(lambda what, s: say(f"run: loaded {what} in {s:.1f} s"))
    agent = build_agent(Services(config, store, models), timeline, command=command)
    if on_agent is not None:
        on_agent(agent)
    if length is not None and terminal:
        with click.progressbar(steps, length=length, label="processing", file=sys.stderr) as bar:
            result = agent.run(iter(bar), lockstep=lockstep)
    elif length is not None:
        result = agent.run(step_lines(steps, length), lockstep=lockstep)
    else:
        result = agent.run(steps, lockstep=lockstep)
    summary = {
        "file": source,
        "duration_s": round(result.duration_s, 2),
        "wall_s": round(result.wall_s, 2),
        "sessions": [{"start": s, "end": e, "user": name_of(u)} for s, e, u in result.sessions],
        "memory_ops": sum(len(o.applied.ops) for o in result.outcomes),
        "failed_sessions": [o.reason for o in result.outcomes if not o.ok],
    }
    drain = result.memory_drain
    if drain is not None:
        summary["memory_drain"] = {"wall_s": round(drain.wall_s, 2), "left": drain.left}
    click.echo(
        f"\n{result.duration_s:.1f} s processed in {result.wall_s:.1f} s; {len(result.sessions)} session(s), "
        f"{summary['memory_ops']} memory operation(s)"
    )
    if drain is not None and drain.left:
        click.echo(
            f"{drain.left} session(s) still waiting for memory after {drain.wall_s:.0f} s: they stay in the store"
            " (egomem status; egomem worker --once writes them)",
            err=True,
        )
    extra = after() if after is not None else {}
    if json_path:
        write_json(
            Path(json_path),
            {**summary, "events": [e.to_json() for e in timeline.events], "memory": memory_snapshot(store), **extra},
        )
    return summary
