"""Fixtures of the memory tests: one real MiniLM encoder per session (loaded from its package)."""

from __future__ import annotations

import pytest

from egomem.retrieval.encoder import TextEncoder


@pytest.fixture(scope="session")
def encoder() -> TextEncoder:
    return TextEncoder()
