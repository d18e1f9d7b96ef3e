"""Benchmarks: `egomem bench NAME` prints a table and, with --json PATH, writes metrics.

A benchmark is a function registered under a name. It receives the options the
CLI collected and returns a BenchResult; printing and JSON writing are shared.
A benchmark named NAME lives in `egomem/bench/NAME.py` ("-" in NAME is "_" in the file
name) and registers itself with
`@register("NAME")` on import; modules are found by name and imported lazily, so the
CLI loads only the benchmark it runs (they pull heavy models).
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from egomem.config import ENV_PREFIX
from egomem.errors import InputError
from egomem_eval.data import data_root as eval_data_root
from egomem_eval.record import Provenance, command_line


@dataclass
class BenchOptions:
    data: Path | None = None
    json_path: Path | None = None
    quick: bool = False  # smaller sizes, for tests and smoke runs
    extra: dict[str, str] = field(default_factory=dict)
    # A result written into benchmarks/results/ from a tree with uncommitted changes (shown as such).
    allow_dirty: bool = False
    # Told each long step as it begins ("real: recording 3 of 21: ..."); `egomem bench` shows it
    # as progress (a spinner on a terminal, timestamped lines when piped).
    report: Callable[[str], None] = field(default=lambda _text: None, repr=False, compare=False)


def parse_settings(raw: str) -> dict[str, str]:
    """'llm.n_threads=1,memory.model_pass=inline' -> {'llm.n_threads': '1', ...}: settings of the
    product's configuration a benchmark runs with instead of its defaults (a labelled extra row)."""
    settings: dict[str, str] = {}
    for setting in raw.split(","):
        if not setting.strip():
            continue
        key, eq, value = setting.strip().partition("=")
        if not eq or key.count(".") != 1 or not value.strip():
            raise InputError(f"a setting is section.key=value; got {setting.strip()!r}")
        settings[key.strip()] = value.strip()
    return settings


def settings_environ(settings: dict[str, str]) -> dict[str, str]:
    """The settings as the EGOMEM_SECTION__KEY variables `load_config(environ=...)` reads."""
    return {ENV_PREFIX + "__".join(k.split(".")).upper(): v for k, v in settings.items()}


@dataclass
class BenchResult:
    name: str
    metrics: dict[str, Any]
    # One table per section: (title, header, rows).
    tables: list[tuple[str, list[str], list[list[Any]]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def data_root(options: BenchOptions | None = None, dataset: str = "") -> Path:
    """Where a benchmark's data is: `--data` as given (a bench's own folder or the root, as
    that bench documents), else as `egomem_eval.data.data_root` finds `dataset`."""
    return eval_data_root(options.data if options is not None else None, dataset)


BenchFn = Callable[[BenchOptions], BenchResult]

_REGISTRY: dict[str, BenchFn] = {}


def register(name: str) -> Callable[[BenchFn], BenchFn]:
    def deco(fn: BenchFn) -> BenchFn:
        _REGISTRY[name] = fn
        return fn

    return deco


def available() -> list[str]:
    """Benchmark names: module names with "_" written "-" (`locomo_qa.py` is `locomo-qa`)."""
    here = Path(__file__).parent
    return sorted(m.name.replace("_", "-") for m in pkgutil.iter_modules([str(here)]) if not m.name.startswith("_"))


def run_bench(name: str, options: BenchOptions) -> BenchResult:
    if name not in available():
        raise InputError(f"unknown benchmark {name!r}; available: {', '.join(available())}")
    # The code's state is taken before anything runs (a dirty tree is refused here, not after an hour).
    provenance = Provenance(options.json_path, options.allow_dirty)
    options.report(f"{name}: loading")
    importlib.import_module(f"egomem.bench.{name.replace('-', '_')}")
    options.report(f"{name}: running" + (" (--quick)" if options.quick else ""))
    t0 = time.perf_counter()
    fn = _REGISTRY[name] if name in _REGISTRY else _REGISTRY[name.replace("-", "_")]
    result = fn(options)
    if options.json_path is not None:
        # The metrics inside an envelope saying how to reproduce them (see egomem_eval/record.py).
        command = command_line(name, options.data, options.quick, options.extra, options.json_path, options.allow_dirty)
        record = {**provenance.envelope(name, command, time.perf_counter() - t0), "metrics": result.metrics}
        options.json_path.parent.mkdir(parents=True, exist_ok=True)
        options.json_path.write_text(json.dumps(record, indent=2, default=_jsonable) + "\n")
    return result


def read_metrics(path: Path) -> dict[str, Any]:
    """The metrics of a result file written by `--json` (its envelope left out)."""
    metrics: dict[str, Any] = json.loads(path.read_text())["metrics"]
    return metrics


def _jsonable(x: Any) -> Any:
    if hasattr(x, "tolist"):
        return x.tolist()
    if isinstance(x, Path):
        return str(x)
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")


def format_table(title: str, header: list[str], rows: list[list[Any]]) -> str:
    def cell(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.4f}" if abs(v) < 100 else f"{v:.1f}"
        return str(v)

    body = [[cell(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in body)) if body else len(h) for i, h in enumerate(header)]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))
    out = [title, line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in body]
    return "\n".join(out)


def render(result: BenchResult) -> str:
    parts = [format_table(t, h, r) for t, h, r in result.tables]
    parts += [f"note: {n}" for n in result.notes]
    return "\n\n".join(parts)
