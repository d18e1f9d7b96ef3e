"""Settings of memory management: `MemoryConfig` lives in egomem.config (the `memory`
section); re-exported here for the memory package's users."""

from __future__ import annotations

from egomem.config import MemoryConfig

__all__ = ["MemoryConfig"]
