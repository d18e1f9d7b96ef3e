"""Where the evaluation data is, for benchmarks and training alike."""

from __future__ import annotations

import os
from pathlib import Path


def data_root(data: Path | None = None, dataset: str = "") -> Path:
    """`data` as given (a bench's or a script's own folder or the root, as the caller
    documents), else `dataset` under EGOMEM_BENCH_DATA, else under `../shared/data` from the
    working directory. Never relative to the source file: an installed wheel has no
    repository around it."""
    if data is not None:
        return data
    root = os.environ.get("EGOMEM_BENCH_DATA")
    base = Path(root) if root else (Path.cwd() / ".." / "shared" / "data").resolve()
    return base / dataset if dataset else base
