"""Schema version 6: the durable memory-writing queue (table `memory_jobs`).

Frozen (see v0001). One row per finished session, committed before extraction: the
session as JSON, its idempotent key, and the job's state (pending, running, done,
failed), attempts, backoff and lease, and what it wrote (the episode status, the
fallback's reason). See memory/jobs.py.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic.operations import Operations

VERSION = 6

_REAL = sa.DOUBLE_PRECISION


def upgrade(op: Operations, dialect: str) -> None:
    op.create_table(
        "memory_jobs",
        sa.Column("key", sa.Text, primary_key=True),
        sa.Column("episode_id", sa.Text, nullable=False),
        sa.Column("user_id", sa.Text),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False, server_default="pending"),
        sa.Column("attempts", sa.Integer, nullable=False, server_default=sa.text("0")),
        sa.Column("session_end", _REAL, nullable=False),
        sa.Column("enqueued_at", _REAL, nullable=False),
        sa.Column("not_before", _REAL, nullable=False),
        sa.Column("claimed_by", sa.Text),
        sa.Column("claimed_at", _REAL),
        sa.Column("done_at", _REAL),
        sa.Column("outcome", sa.Text, nullable=False, server_default=""),
        sa.Column("fallback", sa.Text, nullable=False, server_default=""),
        sa.Column("last_error", sa.Text, nullable=False, server_default=""),
        sa.CheckConstraint("status IN ('pending', 'running', 'done', 'failed')"),
    )
    op.create_index("memory_jobs_due", "memory_jobs", ["status", "not_before"])
    op.create_index("memory_jobs_user", "memory_jobs", ["user_id"])
