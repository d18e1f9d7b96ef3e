"""Memory store M: one interface (`MemoryStore`), one driver per database."""

from __future__ import annotations

from egomem.config import Config
from egomem.providers import BuildContext, create
from egomem.store.base import MemoryStore
from egomem.store.sqlite import SQLiteStore

__all__ = ["MemoryStore", "SQLiteStore", "open_store"]


def open_store(config: Config) -> MemoryStore:
    """Open the store the `store` section names (SQLite under data_dir by default)."""
    store: MemoryStore = create("store", config.store, BuildContext(config.data_dir))
    return store
