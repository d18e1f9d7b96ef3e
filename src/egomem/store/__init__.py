"""Memory store M: one interface (`MemoryStore`), one driver per database."""

from __future__ import annotations

from egomem.config import Config
from egomem.providers import BuildContext, create
from egomem.store.base import MemoryStore
from egomem.store.crypto import master_key_source
from egomem.store.sqlite import SQLiteStore

__all__ = ["MemoryStore", "SQLiteStore", "open_store"]


def open_store(config: Config) -> MemoryStore:
    """Open the store the `store` section names (SQLite under data_dir by default), its identity keys
    sealed under the master key that the `privacy` section names."""
    privacy = config.privacy
    file = str(privacy.master_key_file) if privacy.master_key_file else None
    source = master_key_source(privacy.master_key, file, privacy.master_key_env, config.data_dir)
    store: MemoryStore = create("store", config.store, BuildContext(config.data_dir, shared={"master_key": source}))
    return store
