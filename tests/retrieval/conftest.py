"""Fixtures for the retrieval tests: one shared text encoder (loads MiniLM once)."""

from __future__ import annotations

import pytest

from egomem.retrieval.encoder import TextEncoder, default_encoder


@pytest.fixture(scope="session")
def encoder() -> TextEncoder:
    return default_encoder()
