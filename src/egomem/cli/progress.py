"""Progress for long commands: rich on a terminal, timestamped step lines when stderr is piped or
logged (a bar's redraws would be noise in a log file, and it shows nothing until done).

- `step(text)`: one timestamped line.
- `phases(command)`: a command made of a few long steps of unknown length (`ask`: load the
  models, search, wait for the language model; `bench`: what the benchmark reports). On a
  terminal each step is a spinner line with its elapsed time, ticked when the next begins; piped,
  a line when a step begins and one with its time when it ends.
- `counted(command, what, total)`: a known number of items (`data build`'s streams): a bar on a
  terminal; piped, a line at each tenth (`tenths` does the same for an iterator: `egomem run`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, TypeVar

import click

if TYPE_CHECKING:
    from rich.progress import Progress

T = TypeVar("T")
Say = Callable[[str], None]


def on_terminal() -> bool:
    return sys.stderr.isatty()


def step(text: str) -> None:
    """One progress line on stderr: `2026-05-03T14:02:11 <text>`."""
    click.echo(f"{datetime.now().isoformat(timespec='seconds')} {text}", err=True)


@contextmanager
def phases(command: str, *, terminal: bool | None = None) -> Iterator[Say]:
    """Yields `say(text)`: a new step begins (the one before it ends). See the module doc."""
    terminal = on_terminal() if terminal is None else terminal
    if terminal:
        with _terminal_phases() as say:
            yield say
        return
    current: list[tuple[str, float]] = []

    def end() -> None:
        if current:
            text, t0 = current.pop()
            step(f"{command}: {text}: done in {time.perf_counter() - t0:.1f} s")

    def begin(text: str) -> None:
        end()
        step(f"{command}: {text}")
        current.append((text, time.perf_counter()))

    try:
        yield begin
    finally:
        end()


@contextmanager
def _terminal_phases() -> Iterator[Say]:
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn

    bar = Progress(
        SpinnerColumn(finished_text="✓"),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
    )
    tasks: list[TaskID] = []

    def say(text: str) -> None:
        if tasks:
            bar.update(tasks[-1], completed=1)
        tasks.append(bar.add_task(text, total=1))

    with bar:
        try:
            yield say
        finally:
            if tasks:
                bar.update(tasks[-1], completed=1)


class _Tenths:
    """A step line `line(fraction, seconds)` each time `done` passes a tenth of `total`."""

    def __init__(self, total: int, line: Callable[[float, float], str]) -> None:
        self.total, self.line = total, line
        self._t0 = time.perf_counter()
        self._next = 1

    def at(self, done: int) -> None:
        """One line when `done` passes one or more tenths (the last of them)."""
        passed = min(10, done * 10 // self.total) if self.total > 0 else 0
        if passed >= self._next:
            self._next = passed + 1
            step(self.line(passed / 10, time.perf_counter() - self._t0))


class Counted:
    """A known number of items done one by one: `advance()` after each, `close()` at the end."""

    def __init__(self, command: str, what: str, total: int, *, terminal: bool | None = None) -> None:
        self.done = 0
        self._bar: Progress | None = None
        self._tenths = _Tenths(total, lambda f, s: f"{command}: {self.done} of {total} {what} done ({s:.1f} s)")
        if on_terminal() if terminal is None else terminal:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self._bar = Progress(
                TextColumn(f"{command}: {what}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=Console(stderr=True),
            )
            self._task = self._bar.add_task(what, total=total)
            self._bar.start()

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done)
        else:
            self._tenths.at(self.done)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def tenths(items: Iterable[T], length: int, line: Callable[[float, float], str]) -> Iterator[T]:
    """`items`, with a timestamped `line(fraction, seconds)` on stderr at each tenth of `length`."""
    marks = _Tenths(length, line)
    for i, s in enumerate(items, 1):
        yield s
        marks.at(i)
