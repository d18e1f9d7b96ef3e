"""Memory store M: one interface (`MemoryStore`), one driver per database."""

from __future__ import annotations

from egomem.config import Config
from egomem.errors import ConfigError
from egomem.store.base import MemoryStore
from egomem.store.sqlite import SQLiteStore

__all__ = ["MemoryStore", "SQLiteStore", "open_store"]


def open_store(config: Config) -> MemoryStore:
    """Open the store the configuration names (SQLite under data_dir by default)."""
    if config.store.backend == "sqlite":
        return SQLiteStore(config.db_path, busy_timeout_ms=config.store.busy_timeout_ms)
    if config.store.backend == "postgres":
        if not config.store.dsn.strip():
            raise ConfigError("store.backend = 'postgres' needs store.dsn (or EGOMEM_STORE__DSN)")
        try:  # imported here: psycopg is the optional `postgres` extra
            from egomem.store.postgres import PostgresStore
        except ImportError as exc:
            raise ConfigError(
                f"the PostgreSQL store needs the postgres extra (pip install 'egomem[postgres]'): {exc}"
            ) from exc
        return PostgresStore(config.store.dsn)
    raise ConfigError(f"store backend {config.store.backend!r} is not available in this build")
