"""Shared fixtures. Tests for each area live in tests/<area>/."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
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


@pytest.fixture
def shared_data() -> Callable[[str], Path]:
    """`shared_data("faces_lfw_subset_10x10")`: a folder of ../shared/data, or skip where absent."""

    def get(name: str) -> Path:
        p = SHARED_DATA / name
        if not p.exists():
            pytest.skip(f"../shared/data/{name} is not present")
        return p

    return get


@pytest.fixture
def test_data() -> Path:
    """tests/data: small samples copied with their SOURCE.md attribution."""
    return TEST_DATA
