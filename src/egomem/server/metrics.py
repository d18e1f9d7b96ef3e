"""Process metrics in the Prometheus text format (no client library needed for a few series)."""

from __future__ import annotations

import threading
from collections import defaultdict


class Metrics:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counters: dict[tuple[str, tuple[tuple[str, str], ...]], float] = defaultdict(float)
        self._gauges: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
        self._help: dict[str, tuple[str, str]] = {}

    def describe(self, name: str, kind: str, text: str) -> None:
        self._help[name] = (kind, text)

    def inc(self, name: str, value: float = 1.0, **labels: str) -> None:
        with self._lock:
            self._counters[(name, tuple(sorted(labels.items())))] += value

    def set(self, name: str, value: float, **labels: str) -> None:
        with self._lock:
            self._gauges[(name, tuple(sorted(labels.items())))] = value

    def render(self) -> str:
        lines: list[str] = []
        with self._lock:
            series = [*self._counters.items(), *self._gauges.items()]
        seen: set[str] = set()
        for (name, labels), value in sorted(series):
            if name not in seen and name in self._help:
                kind, text = self._help[name]
                lines += [f"# HELP {name} {text}", f"# TYPE {name} {kind}"]
            seen.add(name)
            lab = ",".join(f'{k}="{v}"' for k, v in labels)
            lines.append(f"{name}{{{lab}}} {value}" if lab else f"{name} {value}")
        return "\n".join(lines) + "\n"
