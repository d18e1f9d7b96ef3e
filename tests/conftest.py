from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from egomem.store.sqlite import SQLiteStore

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
TEST_DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "memory.db")
    yield s
    s.close()


def shared_data(name: str) -> Path:
    """A folder of ../shared/data, or skip the test where it is absent."""
    p = SHARED_DATA / name
    if not p.exists():
        pytest.skip(f"../shared/data/{name} is not present")
    return p
