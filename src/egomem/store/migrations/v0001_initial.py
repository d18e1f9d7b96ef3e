"""Schema version 1: people, identity keys, episodes, facts, relations, history.

Frozen: this is what version 1 is on every database, whatever store/schema.py says later.
On PostgreSQL identity keys also get `embedding`, a pgvector copy of the float32 `vector`
that the database can search (the HNSW index per encoder comes from store/hnsw.py), and an
index on (model, modality, dim): add_key and nearest_keys look up the dimension of a
model's keys, which without it is a scan of every key (about 100 ms at 100k keys).
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic.operations import Operations

VERSION = 1

_REAL = sa.DOUBLE_PRECISION
# BIGINT identity on PostgreSQL; on SQLite only `INTEGER PRIMARY KEY` is the rowid.
_ROW_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _fk(target: str, ondelete: str) -> sa.ForeignKey:
    return sa.ForeignKey(target, ondelete=ondelete)


def _id(dialect: str, type_: Any, *identity: sa.Identity) -> sa.Column[Any]:
    # Version 1 was first written as SQL, `id TEXT PRIMARY KEY`, which SQLite leaves nullable
    # (PostgreSQL's primary key implies NOT NULL): kept, so fresh and older databases are the same.
    return sa.Column("id", type_, *identity, primary_key=True, nullable=dialect == "sqlite")


def upgrade(op: Operations, dialect: str) -> None:
    op.create_table(
        "users",
        _id(dialect, sa.Text),
        sa.Column("name", sa.Text),
        sa.Column("placeholder", sa.Integer, nullable=False, server_default=sa.text("0")),
        sa.Column("created_at", _REAL, nullable=False),
        sa.Column("last_seen", _REAL),
    )
    op.create_index("users_name", "users", ["name"])

    op.create_table(
        "identity_keys",
        _id(dialect, _ROW_ID, sa.Identity()),
        sa.Column("user_id", sa.Text, _fk("users.id", "CASCADE"), nullable=False),
        sa.Column("modality", sa.Text, nullable=False),
        sa.Column("model", sa.Text, nullable=False),
        sa.Column("dim", sa.Integer, nullable=False),
        sa.Column("vector", sa.LargeBinary, nullable=False),
        sa.Column("condition", sa.Text, nullable=False, server_default=""),
        sa.Column("created_at", _REAL, nullable=False),
        sa.CheckConstraint("modality IN ('face', 'voice')"),
        sa.CheckConstraint("dim > 0"),
    )
    op.create_index("identity_keys_user", "identity_keys", ["user_id", "modality"])

    op.create_table(
        "episodes",
        _id(dialect, sa.Text),
        sa.Column("start_t", _REAL, nullable=False),
        sa.Column("end_t", _REAL, nullable=False),
        sa.Column("user_transcript", sa.Text, nullable=False, server_default=""),
        sa.Column("assistant_transcript", sa.Text, nullable=False, server_default=""),
        sa.Column("summary", sa.Text, nullable=False, server_default=""),
        sa.Column("status", sa.Text, nullable=False, server_default="done"),
        sa.Column("created_at", _REAL, nullable=False),
    )

    op.create_table(
        "episode_participants",
        sa.Column("episode_id", sa.Text, _fk("episodes.id", "CASCADE"), primary_key=True),
        sa.Column("user_id", sa.Text, _fk("users.id", "CASCADE"), primary_key=True),
    )
    op.create_index("episode_participants_user", "episode_participants", ["user_id"])

    op.create_table(
        "facts",
        _id(dialect, sa.Text),
        sa.Column("user_id", sa.Text, _fk("users.id", "CASCADE"), nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("confidence", _REAL, nullable=False),
        sa.Column("source_episode", sa.Text, _fk("episodes.id", "SET NULL")),
        sa.Column("source_text", sa.Text),
        sa.Column("created_at", _REAL, nullable=False),
        sa.Column("valid_from", _REAL, nullable=False),
        sa.Column("valid_to", _REAL),
        sa.Column("superseded_by", sa.Text),
        sa.Column("importance", _REAL, nullable=False, server_default=sa.text("0.5")),
        sa.Column("use_count", sa.Integer, nullable=False, server_default=sa.text("0")),
        sa.Column("last_used", _REAL),
        sa.CheckConstraint("kind IN ('fact', 'preference', 'summary', 'persona')"),
    )
    op.create_index("facts_user", "facts", ["user_id", "valid_to"])

    op.create_table(
        "relations",
        _id(dialect, sa.Text),
        sa.Column("subject_id", sa.Text, _fk("users.id", "CASCADE"), nullable=False),
        sa.Column("relation", sa.Text, nullable=False),
        sa.Column("object_id", sa.Text, _fk("users.id", "CASCADE")),
        sa.Column("object_name", sa.Text),
        sa.Column("source_episode", sa.Text, _fk("episodes.id", "SET NULL")),
        sa.Column("created_at", _REAL, nullable=False),
        sa.Column("valid_from", _REAL, nullable=False),
        sa.Column("valid_to", _REAL),
        sa.CheckConstraint("object_id IS NOT NULL OR object_name IS NOT NULL"),
    )
    op.create_index("relations_subject", "relations", ["subject_id"])
    op.create_index("relations_object", "relations", ["object_id"])

    op.create_table(
        "history",
        _id(dialect, _ROW_ID, sa.Identity()),
        sa.Column("at", _REAL, nullable=False),
        sa.Column("op", sa.Text, nullable=False),
        sa.Column("entity", sa.Text, nullable=False),
        sa.Column("entity_id", sa.Text, nullable=False),
        sa.Column("user_id", sa.Text),
        sa.Column("other_user_id", sa.Text),
        sa.Column("before_json", sa.Text),
        sa.Column("after_json", sa.Text),
        sa.Column("cause", sa.Text, nullable=False, server_default=""),
        sa.CheckConstraint("op IN ('ADD', 'UPDATE', 'DELETE', 'NOOP')"),
    )
    op.create_index("history_user", "history", ["user_id"])
    op.create_index("history_other_user", "history", ["other_user_id"])

    if dialect == "postgresql":
        from pgvector.sqlalchemy import VECTOR  # the `postgres` extra

        op.add_column("identity_keys", sa.Column("embedding", VECTOR()))
        op.create_index("identity_keys_model", "identity_keys", ["model", "modality", "dim"])
