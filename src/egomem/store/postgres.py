"""PostgreSQL + pgvector driver, for fleets sharing one memory.

The memory operations are the same as SQLite's (store/ops/, SQLAlchemy Core compiles
them for each dialect); this module opens the connection: the schema to work in
(created if missing), the pgvector extension, `hnsw.ef_search` for every search. Identity
keys also live in the pgvector column `embedding`, which `nearest_keys` searches through
one HNSW index per encoder (store/hnsw.py). The schema version lives in `egomem_schema`.

Identity keys are sealed at rest in `vector` (store/crypto.py), and the keyring of data keys is in
the store's schema, where every worker finds it; `embedding` stays plaintext, since the HNSW index
must see the vectors. A purge deletes a person's rows and wrapped data key in one transaction;
`scrub` (VACUUM FULL of the key and keyring tables, then CHECKPOINT) leaves no copy of their bytes in
the tables' or the indexes' files. docs/privacy.md, "Keys at rest", says what it cannot reach.

Connections are autocommit with explicit BEGIN/COMMIT (store/db.py). A lost connection
(server restart, terminated backend) raises StoreError; the failed transaction is gone
with it, and the next call reconnects.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import psycopg
import sqlalchemy as sa
from pgvector import Vector
from pgvector.psycopg.vector import VectorBinaryDumper
from psycopg import sql as pgsql
from psycopg.conninfo import conninfo_to_dict
from psycopg.types import TypeInfo
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import NullPool

from egomem.config import default_data_dir
from egomem.errors import ConfigError, StoreError, StoreUnreachable
from egomem.store import hnsw
from egomem.store.base import MemoryStore
from egomem.store.capabilities import POSTGRES
from egomem.store.crypto import MASTER_KEY_FILE, KeyFile, MasterKeySource
from egomem.store.db import Database, first_line
from egomem.store.keyring import Keyring

if TYPE_CHECKING:
    from egomem.providers import BuildContext, PostgresStoreConfig

# HNSW candidate list per search (pgvector's default is 40). Chosen on dev queries by `egomem bench store
# --set keys=faces` (keys from real dlib descriptors, jittered; the dev queries are not the reported ones):
# at 100k and 1M keys the nearest user agreed with exact search for 200/200 dev queries at 40, as at 100
# and 200, and 40 is the fastest (benchmarks/results/store_1m.json). Gaussian keys are harder (20k: 81% at
# 40), but faces are what is searched. A search for more keys than this continues past it (_search_past_ef).
DEFAULT_EF_SEARCH = 40
_SCHEMA_FIRST = set(string.ascii_lowercase + "_")
_SCHEMA_CHARS = _SCHEMA_FIRST | set(string.digits)


def valid_schema_name(name: str) -> bool:
    """Lower-case letters, digits and _, not starting with a digit, at most 63 characters."""
    return 0 < len(name) <= 63 and name[0] in _SCHEMA_FIRST and set(name) <= _SCHEMA_CHARS


def redact(dsn: str) -> str:
    """host:port/dbname of a DSN, for messages (never the password)."""
    try:
        info = conninfo_to_dict(dsn)
    except psycopg.Error:
        return "<malformed DSN>"
    return f"{info.get('host', 'localhost')}:{info.get('port', 5432)}/{info.get('dbname', '')}"


def _search_past_ef(conn: psycopg.Connection[Any]) -> None:
    """A search for more keys than ef_search (the s-norm cohort asks for top_n + 32 = 132) goes on through
    the graph instead of stopping at ef_search rows: pgvector 0.8's iterative scan, in strict distance
    order. A search within ef_search (identification asks for 32) is the same scan as without it."""
    row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    version = tuple(int(p) for p in str(row[0]).split(".")[:2] if p.isdigit()) if row else ()
    if version >= (0, 8):
        conn.execute("SET hnsw.iterative_scan = strict_order")


def _send_vectors_binary(conn: psycopg.Connection[Any]) -> None:
    """pgvector `Vector` parameters go in pgvector's binary format (`%(name)b`; the nearest-keys query,
    store/hnsw.py nearest_sql). Only the Vector class: numpy arrays and loaded columns keep their
    adapters, so every other statement is unchanged."""
    info = TypeInfo.fetch(conn, "vector")
    if info is None:
        raise psycopg.ProgrammingError("the vector type is missing")
    conn.adapters.register_dumper(Vector, type("VectorBinary", (VectorBinaryDumper,), {"oid": info.oid}))


class PostgresStore(MemoryStore):
    """The memory store in a PostgreSQL database (schema: `schema`, else the DSN's search_path)."""

    def __init__(
        self,
        dsn: str,
        *,
        schema: str | None = None,
        connect_timeout_s: int = 10,
        ef_search: int = DEFAULT_EF_SEARCH,
        master_key: MasterKeySource | None = None,
    ) -> None:
        """`master_key`: where the master key comes from (default: master.key in the default data folder;
        every worker of a fleet needs the same key, e.g. privacy.master_key = 'env')."""
        if not dsn.strip():
            raise StoreError("the PostgreSQL store needs a DSN (store.dsn, EGOMEM_STORE__DSN)")
        if schema is not None and not valid_schema_name(schema):
            raise StoreError(f"invalid schema name {schema!r}: lower-case letters, digits and _ only")
        try:
            conninfo_to_dict(dsn)
        except psycopg.Error as exc:
            raise StoreError("malformed PostgreSQL DSN (expected postgresql://user:pass@host:port/db)") from exc
        if not 1 <= ef_search <= 1000:
            raise StoreError(f"ef_search must be in 1..1000 (pgvector's range), got {ef_search}")
        self.dsn = dsn
        self.schema = schema
        self.ef_search = ef_search
        self._timeout = connect_timeout_s
        engine = sa.create_engine(
            "postgresql+psycopg://", creator=self._connect, poolclass=NullPool, isolation_level="AUTOCOMMIT"
        )
        db = Database(engine, begin="BEGIN", where=f"PostgreSQL at {redact(dsn)}")
        source = master_key or KeyFile(default_data_dir() / MASTER_KEY_FILE)
        super().__init__(db, POSTGRES, Keyring(db, source, separate=False))
        try:
            self._open()
        except BaseException:
            self.db.close()
            raise

    @classmethod
    def from_config(cls, cfg: PostgresStoreConfig, ctx: BuildContext) -> PostgresStore:
        if not cfg.dsn.strip():
            raise ConfigError("store.backend = 'postgres' needs store.dsn (or EGOMEM_STORE__DSN)")
        schema = cfg.schema_name or None
        return cls(
            cfg.dsn,
            schema=schema,
            connect_timeout_s=cfg.connect_timeout_s,
            ef_search=cfg.ef_search,
            master_key=ctx.shared.get("master_key"),
        )

    # -- connection ----------------------------------------------------------------
    def _connect(self) -> psycopg.Connection[Any]:
        """A new driver connection, set up for the store (SQLAlchemy's pool calls this)."""
        where = redact(self.dsn)
        try:
            conn = psycopg.connect(self.dsn, autocommit=True, connect_timeout=self._timeout)
        except psycopg.Error as exc:
            raise StoreUnreachable(f"cannot connect to PostgreSQL at {where}: {first_line(exc)}") from exc
        try:
            if self.schema is not None:
                self._ensure_schema(conn)
                conn.execute(pgsql.SQL("SET search_path TO {}, public").format(pgsql.Identifier(self.schema)))
        except psycopg.Error as exc:
            conn.close()
            problem = f"cannot create or use schema {self.schema!r} ({first_line(exc)})"
            raise StoreError(f"PostgreSQL at {where}: {problem}") from exc
        try:
            if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone() is None:
                with conn.transaction():  # same race as the schema's, on pg_extension
                    conn.execute("SELECT pg_advisory_xact_lock(hashtext('egomem-extension:vector'))")
                    # In public, never in the store's own schema (first on the search_path): there
                    # other schemas would not see its type, and dropping the schema would drop it.
                    conn.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
            conn.execute(pgsql.SQL("SET hnsw.ef_search = {}").format(pgsql.Literal(self.ef_search)))
            _search_past_ef(conn)
            _send_vectors_binary(conn)
        except psycopg.Error as exc:
            conn.close()
            raise StoreError(
                f"PostgreSQL at {where} lacks the pgvector extension or rights to it ({first_line(exc)});"
                " a superuser must run CREATE EXTENSION vector (scripts/postgres.sh does)"
            ) from exc
        return conn

    def _ensure_schema(self, conn: psycopg.Connection[Any]) -> None:
        """Create the store's schema once, even when several workers connect at the same moment.

        CREATE SCHEMA IF NOT EXISTS is not safe under concurrency in PostgreSQL: two sessions can
        both see no schema and one then fails on pg_namespace's unique index. A transaction-scoped
        advisory lock on the schema's name serialises the creators.
        """
        assert self.schema is not None
        exists = "SELECT 1 FROM pg_namespace WHERE nspname = %s"
        if conn.execute(exists, (self.schema,)).fetchone() is not None:
            return
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"egomem-schema:{self.schema}",))
            conn.execute(pgsql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(pgsql.Identifier(self.schema)))

    def drop_schema(self) -> None:
        """Drop this store's own schema with everything in it (benchmarks and tests), and close."""
        if self.schema is None:
            raise StoreError("this store works in the DSN's schema, which it did not create: not dropping it")
        self.db.execute(sa.schema.DropSchema(self.schema, cascade=True, if_exists=True))
        self.close()

    def scrub(self, *, vacuum: bool = False) -> None:
        """Rewrite the identity key and keyring tables with their indexes (VACUUM FULL: a plain VACUUM
        frees dead rows but may leave their bytes in the pages), so their files hold no deleted key; then
        CHECKPOINT where this role may. Not run by every purge: it takes the tables' exclusive lock for as
        long as the rewrite (HNSW indexes included), so a fleet runs it after purges at a quiet hour."""
        if self.db.in_transaction:
            return
        for table in ("identity_keys", "data_keys"):
            self.db.execute(sa.text(f"VACUUM FULL {table}"))
        may = "SELECT rolsuper OR pg_has_role(current_user, 'pg_checkpoint', 'member') AS may FROM pg_roles"
        row = self.db.first(sa.text(may + " WHERE rolname = current_user"))
        if row is not None and row["may"]:
            self.db.execute(sa.text("CHECKPOINT"))

    # -- vector indexes -----------------------------------------------------------------
    def drop_vector_indexes(self) -> None:
        with self.transaction():
            self._ddl(hnsw.drop_hnsw_indexes)

    def create_vector_indexes(self) -> None:
        with self.transaction():
            self._ddl(hnsw.ensure_hnsw_indexes)
        # This store's own table only: a bare ANALYZE visits every schema's tables, and waits for any
        # HNSW build running in another (a million-key build holds its table for half an hour).
        self.db.execute(sa.text("ANALYZE identity_keys"))

    def _ddl(self, step: Callable[[sa.Connection], None]) -> None:
        try:
            step(self.db.connection())
        except DBAPIError as exc:
            raise StoreError(f"store error: {first_line(exc.orig)}") from exc

    # -- bulk import ---------------------------------------------------------------------
    def copy_rows(self, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> int:
        """Bulk-load rows with COPY (imports, benchmarks): no history rows, no validation beyond the schema's.
        numpy arrays go into pgvector columns as vectors."""
        self._check_table(table)
        unknown = set(columns) - set(self.columns(table))
        if unknown:
            raise StoreError(f"table {table} has no columns {sorted(unknown)}")
        statement = pgsql.SQL("COPY {} ({}) FROM STDIN").format(
            pgsql.Identifier(table), pgsql.SQL(", ").join(pgsql.Identifier(c) for c in columns)
        )
        n = 0
        with self.transaction():
            raw = self.db.connection().connection.dbapi_connection
            assert isinstance(raw, psycopg.Connection)
            try:
                with raw.cursor() as cur, cur.copy(statement) as copy:
                    for row in rows:
                        copy.write_row([Vector(v).to_text() if isinstance(v, np.ndarray) else v for v in row])
                        n += 1
            except psycopg.Error as exc:
                raise StoreError(f"bulk load into {table} failed: {first_line(exc)}") from exc
        return n
