"""Shared fixtures. Tests for each area live in tests/<area>/."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from egomem.store.sqlite import SQLiteStore
from egomem_eval.data import data_root

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SHARED_DATA = data_root()  # --data / EGOMEM_BENCH_DATA / ../shared/data from the working directory
TEST_DATA = Path(__file__).resolve().parent / "data"


def pytest_configure(config: pytest.Config) -> None:
    # Locally, tests that need the evaluation data skip (with the reason) where it is
    # absent; in CI a missing data folder would silently skip them, so the run fails.
    if os.environ.get("CI", "").lower() == "true" and not SHARED_DATA.is_dir():
        raise pytest.UsageError(f"CI=true but the evaluation data folder {SHARED_DATA} is missing")


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
