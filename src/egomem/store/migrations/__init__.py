"""Schema migrations: one history for SQLite and PostgreSQL, written with Alembic's operations.

Alembic is used programmatically (a MigrationContext on the store's own connection and
its Operations), not through a script directory, and not as per-dialect SQL files:
- SQLAlchemy Core creates tables but cannot alter them; Alembic's operations emit the
  dialect's ALTER (and on SQLite, which can alter little, rebuild a table in batch mode),
  so a later migration is one function for both databases, not two SQL files that drift;
- the version stays where the first schema kept it (PRAGMA user_version on SQLite, table
  egomem_schema on PostgreSQL), so databases made before this module open as they are
  (no stamping, no alembic_version table) and a newer schema is refused as before;
- nothing is needed at run time but the package: no alembic.ini, no env.py.

A migration is a module `vNNNN_<what>.py` with VERSION and `upgrade(op, dialect)`, listed
in MIGRATIONS. Released migrations are frozen: they spell their own columns and never read
store/schema.py, which describes the newest schema.

PostgreSQL: several workers may start together; the first migrates under an advisory
lock per schema, the others wait and find nothing to do. After migrating, every encoder
that the encoder table marks for HNSW gets its index if it lacks one (store/hnsw.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import sqlalchemy as sa
from alembic.operations import Operations
from alembic.runtime.migration import MigrationContext
from sqlalchemy.exc import DBAPIError
from sqlalchemy.schema import CreateTable

from egomem.errors import StoreError
from egomem.store.db import Database, first_line
from egomem.store.migrations import (
    v0001_initial,
    v0002_evidence,
    v0003_provenance,
    v0004_privacy,
    v0005_sealed_keys,
    v0006_memory_jobs,
)
from egomem.store.schema import egomem_schema


@dataclass(frozen=True)
class Migration:
    version: int
    upgrade: Callable[[Operations, str], None]


MIGRATIONS = (
    Migration(v0001_initial.VERSION, v0001_initial.upgrade),
    Migration(v0002_evidence.VERSION, v0002_evidence.upgrade),
    Migration(v0003_provenance.VERSION, v0003_provenance.upgrade),
    Migration(v0004_privacy.VERSION, v0004_privacy.upgrade),
    Migration(v0005_sealed_keys.VERSION, v0005_sealed_keys.upgrade),
    Migration(v0006_memory_jobs.VERSION, v0006_memory_jobs.upgrade),
)
NEWEST = MIGRATIONS[-1].version


def current_version(db: Database) -> int:
    if db.dialect == "sqlite":
        row = db.first(sa.text("PRAGMA user_version"))
        return int(row["user_version"]) if row else 0
    row = db.first(sa.select(egomem_schema.c.version))
    return int(row["version"]) if row else 0


def _set_version(db: Database, version: int, *, had_row: bool) -> None:
    if db.dialect == "sqlite":
        db.execute(sa.text(f"PRAGMA user_version = {int(version)}"))  # PRAGMA takes no parameters
    elif had_row:
        db.execute(sa.update(egomem_schema).values(version=version))
    else:
        db.execute(sa.insert(egomem_schema).values(version=version))


def migrate(db: Database) -> None:
    """Bring the database to NEWEST in one transaction; refuse a schema newer than this code."""
    with db.transaction():
        postgres = db.dialect == "postgresql"
        if postgres:
            db.execute(sa.text("SELECT pg_advisory_xact_lock(hashtext('egomem-migrate:' || current_schema()))"))
            db.execute(CreateTable(egomem_schema, if_not_exists=True))
        had_row = not postgres or db.first(sa.select(egomem_schema.c.version)) is not None
        current = current_version(db)
        if current > NEWEST:
            raise StoreError(
                f"the store has schema version {current}, newer than this egomem ({NEWEST}): upgrade egomem"
            )
        op = Operations(MigrationContext.configure(db.connection()))
        for migration in [m for m in MIGRATIONS if m.version > current]:
            _apply(f"schema migration {migration.version}", partial(migration.upgrade, op, db.dialect))
            _set_version(db, migration.version, had_row=had_row)
            had_row = True
        if postgres:
            from egomem.store.hnsw import ensure_hnsw_indexes  # pgvector: the `postgres` extra

            _apply("creating the HNSW indexes", lambda: ensure_hnsw_indexes(db.connection()))


def _apply(what: str, step: Callable[[], None]) -> None:
    """Run DDL straight on the connection, its driver errors as one-line StoreErrors."""
    try:
        step()
    except DBAPIError as exc:
        raise StoreError(f"{what} failed: {first_line(exc.orig)}") from exc
