"""The memory store's tables, in one SQLAlchemy MetaData: what queries are built from.

This is the current schema; the migrations in `store/migrations/` create it step by step
(a migration is frozen once released, this module moves on). Column types are chosen so
that both dialects get what the first schema gave them: TEXT, DOUBLE PRECISION, BLOB on
SQLite / BYTEA on PostgreSQL, `INTEGER PRIMARY KEY` (the rowid) on SQLite / a BIGINT
identity column on PostgreSQL.

Two things exist on PostgreSQL only: `identity_keys.embedding` (the pgvector copy of
each key, searched by the database; SQLite has no such column, so queries name their
columns: `KEY_COLUMNS`) and `egomem_schema` (the schema version; SQLite keeps it in
PRAGMA user_version).
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.types import TypeEngine

try:
    from pgvector.sqlalchemy import VECTOR

    EMBEDDING: TypeEngine[Any] = VECTOR()
except ImportError:  # the `postgres` extra is not installed: only SQLite can be used, which lacks the column
    EMBEDDING = sa.types.NullType()

# BIGINT identity on PostgreSQL; plain INTEGER on SQLite, where only `INTEGER PRIMARY KEY` is the rowid.
ROW_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
REAL = sa.DOUBLE_PRECISION

metadata = sa.MetaData()

users = sa.Table(
    "users",
    metadata,
    sa.Column("id", sa.Text, primary_key=True),
    sa.Column("name", sa.Text),
    sa.Column("placeholder", sa.Integer, nullable=False, server_default=sa.text("0")),  # 0/1, as in schema 1
    sa.Column("created_at", REAL, nullable=False),
    sa.Column("last_seen", REAL),
    sa.Index("users_name", "name"),
)

identity_keys = sa.Table(
    "identity_keys",
    metadata,
    sa.Column("id", ROW_ID, sa.Identity(), primary_key=True),
    sa.Column("user_id", sa.Text, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    sa.Column("modality", sa.Text, nullable=False),
    sa.Column("model", sa.Text, nullable=False),
    sa.Column("dim", sa.Integer, nullable=False),
    sa.Column("vector", sa.LargeBinary, nullable=False),  # float32 little-endian: bit-exact on every backend
    sa.Column("condition", sa.Text, nullable=False, server_default=""),
    sa.Column("created_at", REAL, nullable=False),
    sa.Column("embedding", EMBEDDING),  # PostgreSQL only (see the module docstring)
    # Schema 5: 1 when `vector` holds the key sealed under a data key (store/crypto.py), 0 for a
    # plaintext float32 key (written before schema 5, or bulk-loaded) that the next open seals.
    sa.Column("sealed", sa.Integer, nullable=False, server_default=sa.text("0")),
    # Whose data key sealed it: the person it was stored for. A repair (merge, split, undo) moves keys by
    # user_id alone; they still open under the data key named here (a purge re-seals or destroys it).
    sa.Column("data_key", sa.Text),
    sa.CheckConstraint("modality IN ('face', 'voice')"),
    sa.CheckConstraint("dim > 0"),
    sa.Index("identity_keys_user", "user_id", "modality"),
    sa.Index(
        "identity_keys_unsealed", "id", sqlite_where=sa.text("sealed = 0"), postgresql_where=sa.text("sealed = 0")
    ),
)
# The columns every backend has (identity_keys minus the PostgreSQL-only embedding).
KEY_COLUMNS = tuple(c for c in identity_keys.c if c.name != "embedding")

episodes = sa.Table(
    "episodes",
    metadata,
    sa.Column("id", sa.Text, primary_key=True),
    sa.Column("start_t", REAL, nullable=False),
    sa.Column("end_t", REAL, nullable=False),
    sa.Column("user_transcript", sa.Text, nullable=False, server_default=""),
    sa.Column("assistant_transcript", sa.Text, nullable=False, server_default=""),
    sa.Column("summary", sa.Text, nullable=False, server_default=""),
    sa.Column("status", sa.Text, nullable=False, server_default="done"),
    sa.Column("created_at", REAL, nullable=False),
)

episode_participants = sa.Table(
    "episode_participants",
    metadata,
    sa.Column("episode_id", sa.Text, sa.ForeignKey("episodes.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("user_id", sa.Text, sa.ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
    sa.Index("episode_participants_user", "user_id"),
)

facts = sa.Table(
    "facts",
    metadata,
    sa.Column("id", sa.Text, primary_key=True),
    sa.Column("user_id", sa.Text, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("confidence", REAL, nullable=False),
    sa.Column("source_episode", sa.Text, sa.ForeignKey("episodes.id", ondelete="SET NULL")),
    sa.Column("source_text", sa.Text),
    sa.Column("created_at", REAL, nullable=False),
    sa.Column("valid_from", REAL, nullable=False),
    sa.Column("valid_to", REAL),
    sa.Column("superseded_by", sa.Text),
    sa.Column("importance", REAL, nullable=False, server_default=sa.text("0.5")),
    sa.Column("use_count", sa.Integer, nullable=False, server_default=sa.text("0")),
    sa.Column("last_used", REAL),
    sa.Column("support", sa.Integer, nullable=False, server_default=sa.text("1")),  # schema 2
    # schema 3: provenance (store/migrations/v0003_provenance.py)
    sa.Column("source_turns", sa.Text),  # JSON [[start, end], ...] of the user turns, stream seconds
    sa.Column("identity_status", sa.Text),  # the identity decision that put it on this person
    sa.Column("identity_llr", REAL),  # that decision's fused calibrated LLR
    # schema 4: privacy (store/migrations/v0004_privacy.py)
    sa.Column("sensitivity", sa.Text, nullable=False, server_default="none"),
    sa.CheckConstraint("kind IN ('fact', 'preference', 'summary', 'persona')"),
    sa.Index("facts_user", "user_id", "valid_to"),
)

relations = sa.Table(
    "relations",
    metadata,
    sa.Column("id", sa.Text, primary_key=True),
    sa.Column("subject_id", sa.Text, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    sa.Column("relation", sa.Text, nullable=False),
    sa.Column("object_id", sa.Text, sa.ForeignKey("users.id", ondelete="CASCADE")),
    sa.Column("object_name", sa.Text),
    sa.Column("source_episode", sa.Text, sa.ForeignKey("episodes.id", ondelete="SET NULL")),
    sa.Column("created_at", REAL, nullable=False),
    sa.Column("valid_from", REAL, nullable=False),
    sa.Column("valid_to", REAL),
    sa.Column("support", sa.Integer, nullable=False, server_default=sa.text("1")),  # schema 2
    # schema 3: provenance (store/migrations/v0003_provenance.py)
    sa.Column("source_turns", sa.Text),  # JSON [[start, end], ...] of the user turns, stream seconds
    sa.Column("identity_status", sa.Text),  # the identity decision that put it on this person
    sa.Column("identity_llr", REAL),  # that decision's fused calibrated LLR
    sa.CheckConstraint("object_id IS NOT NULL OR object_name IS NOT NULL"),
    sa.Index("relations_subject", "subject_id"),
    sa.Index("relations_object", "object_id"),
)

# Schema 2: the episodes that support (+1) or contradict (-1) each fact or relation; the
# item's `support` column is the sum of its signs (kept there for ranking without a join).
evidence = sa.Table(
    "evidence",
    metadata,
    sa.Column("id", ROW_ID, sa.Identity(), primary_key=True),
    sa.Column("fact_id", sa.Text, sa.ForeignKey("facts.id", ondelete="CASCADE")),
    sa.Column("relation_id", sa.Text, sa.ForeignKey("relations.id", ondelete="CASCADE")),
    sa.Column("episode_id", sa.Text, sa.ForeignKey("episodes.id", ondelete="SET NULL")),
    sa.Column("sign", sa.Integer, nullable=False),
    sa.Column("at", REAL, nullable=False),
    sa.Column("source_text", sa.Text),
    sa.CheckConstraint("sign IN (1, -1)"),
    sa.CheckConstraint("(fact_id IS NULL) <> (relation_id IS NULL)"),
    sa.Index("evidence_fact", "fact_id"),
    sa.Index("evidence_relation", "relation_id"),
    sa.Index("evidence_episode", "episode_id"),
)

# Schema 4 (privacy): consent decisions with their time and the words that gave them. user_id is
# NULL for a refusal by someone never enrolled (nothing that could recognise them is kept); a
# person's rows go with them when they are purged.
consent_events = sa.Table(
    "consent_events",
    metadata,
    sa.Column("id", ROW_ID, sa.Identity(), primary_key=True),
    sa.Column("user_id", sa.Text, sa.ForeignKey("users.id", ondelete="CASCADE")),
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column("policy", sa.Text, nullable=False),
    sa.Column("at", REAL, nullable=False),
    sa.Column("evidence", sa.Text, nullable=False, server_default=""),
    sa.CheckConstraint("kind IN ('consent', 'refusal', 'deferral', 'withdrawal', 'notice')"),
    sa.Index("consent_events_user", "user_id"),
)

# Append-only log of every memory operation. user_id / other_user_id name the people whose
# data a row holds, so that deleting a person purges their rows.
history = sa.Table(
    "history",
    metadata,
    sa.Column("id", ROW_ID, sa.Identity(), primary_key=True),
    sa.Column("at", REAL, nullable=False),
    sa.Column("op", sa.Text, nullable=False),
    sa.Column("entity", sa.Text, nullable=False),
    sa.Column("entity_id", sa.Text, nullable=False),
    sa.Column("user_id", sa.Text),
    sa.Column("other_user_id", sa.Text),
    sa.Column("before_json", sa.Text),
    sa.Column("after_json", sa.Text),
    sa.Column("cause", sa.Text, nullable=False, server_default=""),
    sa.CheckConstraint("op IN ('ADD', 'UPDATE', 'DELETE', 'NOOP')"),
    sa.Index("history_user", "user_id"),
    sa.Index("history_other_user", "other_user_id"),
)

# Schema 3: each merge or split of people, with every row it changed (`changes_json`: table, primary
# key, the row's columns before and after), so that undo restores exactly the state before it.
repairs = sa.Table(
    "repairs",
    metadata,
    sa.Column("id", ROW_ID, sa.Identity(), primary_key=True),
    sa.Column("at", REAL, nullable=False),
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column("user_id", sa.Text, nullable=False),  # merge: the person kept; split: the person split
    sa.Column("other_user_id", sa.Text, nullable=False),  # merge: the person merged in; split: who got the part
    sa.Column("detail_json", sa.Text, nullable=False),
    sa.Column("changes_json", sa.Text, nullable=False),
    sa.Column("cause", sa.Text, nullable=False, server_default=""),
    sa.Column("undone_at", REAL),
    sa.CheckConstraint("kind IN ('merge', 'split')"),
    sa.Index("repairs_user", "user_id"),
    sa.Index("repairs_other_user", "other_user_id"),
)

# Schema 6: the durable memory-writing queue. A finished session (its turns and identity evidence, as
# JSON) is committed here before extraction, under an idempotent key (device + session); a worker claims
# it, and the memory it writes and the job's `done` commit in one transaction (memory/jobs.py).
memory_jobs = sa.Table(
    "memory_jobs",
    metadata,
    sa.Column("key", sa.Text, primary_key=True),
    sa.Column("episode_id", sa.Text, nullable=False),
    sa.Column("user_id", sa.Text),  # the identified speaker, if any: deleting them deletes their waiting jobs
    sa.Column("payload", sa.Text, nullable=False),  # emptied when done (the episode keeps the transcripts)
    sa.Column("status", sa.Text, nullable=False, server_default="pending"),
    sa.Column("attempts", sa.Integer, nullable=False, server_default=sa.text("0")),
    sa.Column("session_end", REAL, nullable=False),  # wall clock: lag = done_at - session_end
    sa.Column("enqueued_at", REAL, nullable=False),
    sa.Column("not_before", REAL, nullable=False),  # the next attempt's earliest time (backoff)
    sa.Column("claimed_by", sa.Text),  # host:pid:thread of the worker holding it
    sa.Column("claimed_at", REAL),
    sa.Column("done_at", REAL),
    sa.Column("outcome", sa.Text, nullable=False, server_default=""),  # the episode status it wrote
    sa.Column("fallback", sa.Text, nullable=False, server_default=""),  # why the rules answered, if they did
    sa.Column("last_error", sa.Text, nullable=False, server_default=""),
    sa.CheckConstraint("status IN ('pending', 'running', 'done', 'failed')"),
    sa.Index("memory_jobs_due", "status", "not_before"),
    sa.Index("memory_jobs_user", "user_id"),
)

# The keyring (store/keyring.py): each person's data key, wrapped by the master key, and one value
# sealed under the master key that proves a key is the right one before anything is read or written.
# SQLite keeps these in their own file (keyring.db beside memory.db, so that a copy of memory.db holds
# no data key); PostgreSQL in the store's schema (created by migration 5). Kept out of `metadata`:
# on SQLite they are no table of the memory database.
keyring_metadata = sa.MetaData()

data_keys = sa.Table(
    "data_keys",
    keyring_metadata,
    sa.Column("user_id", sa.Text, primary_key=True),
    sa.Column("wrapped", sa.LargeBinary, nullable=False),  # nonce || AES-GCM(master, data key) || tag
    sa.Column("created_at", REAL, nullable=False),
)

keyring_check = sa.Table(
    "keyring_check",
    keyring_metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("sealed", sa.LargeBinary, nullable=False),
)

# PostgreSQL only: the schema version (one row).
egomem_schema = sa.Table("egomem_schema", metadata, sa.Column("version", sa.Integer, nullable=False))
