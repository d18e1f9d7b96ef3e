"""The agent's timeline: what happened, when (stream seconds), for people and machines."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Event:
    time: float  # stream seconds
    type: str  # user | memchunk | session | memory | assistant | heard | warning
    fields: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"time": round(self.time, 2), "type": self.type, **self.fields}


class Timeline:
    def __init__(self) -> None:
        self.events: list[Event] = []
        self._listeners: list[Callable[[Event], None]] = []
        self._lock = threading.Lock()

    def subscribe(self, fn: Callable[[Event], None]) -> None:
        self._listeners.append(fn)

    def add(self, time: float, type: str, **fields: Any) -> Event:
        ev = Event(time, type, fields)
        with self._lock:
            self.events.append(ev)
        for fn in self._listeners:
            fn(ev)
        return ev

    def of_type(self, type: str) -> list[Event]:
        with self._lock:
            return [e for e in self.events if e.type == type]


def format_event(ev: Event, name_of: Callable[[str | None], str]) -> str:
    """One readable line: `  12.4s  memchunk  L1 -> Emily (57 tokens)`."""
    f = ev.fields
    t = f"{ev.time:7.1f}s"
    if ev.type == "user":
        return f"{t}  who      {name_of(f.get('user'))} ({f.get('how', '')})"
    if ev.type == "memchunk":
        first = (f.get("text") or "").splitlines()[:1]
        return f"{t}  memchunk L{f['level']} for {name_of(f.get('user'))}, {f['tokens']} tokens: {' '.join(first)}"
    if ev.type == "session":
        return f"{t}  session  {f['start']:.1f}s-{f['end']:.1f}s of {name_of(f.get('user'))}"
    if ev.type == "memory":
        return f"{t}  memory   {f['op']:<6} {name_of(f.get('user'))}: {f.get('text', '')}"
    if ev.type == "assistant":
        return f'{t}  agent    "{f["text"]}"'
    if ev.type == "heard":
        return f'{t}  heard    "{f["text"]}"'
    if ev.type == "retrieval":
        return f"{t}  level-2  query relation={f['relations']} keywords={f['keywords']}"
    return f"{t}  {ev.type:<8} {f}"
