"""Schema version 4 (privacy): a sensitivity on every fact, and the consent events.

Frozen once released (see v0001). `facts.sensitivity` is 'none' for every existing fact
(what was learnt before this schema was never classified; `egomem people sensitivity`
overrides one); `consent_events` records consent, refusal, deferral, withdrawal and notice
with their time and evidence text.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic.operations import Operations

VERSION = 4

_REAL = sa.DOUBLE_PRECISION
_ROW_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade(op: Operations, dialect: str) -> None:
    # SQLite adds a NOT NULL column with a constant default by ALTER TABLE, no table rebuild.
    op.add_column("facts", sa.Column("sensitivity", sa.Text, nullable=False, server_default="none"))
    op.create_table(
        "consent_events",
        sa.Column("id", _ROW_ID, sa.Identity(), primary_key=True),
        sa.Column("user_id", sa.Text, sa.ForeignKey("users.id", ondelete="CASCADE")),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("policy", sa.Text, nullable=False),
        sa.Column("at", _REAL, nullable=False),
        sa.Column("evidence", sa.Text, nullable=False, server_default=""),
        sa.CheckConstraint("kind IN ('consent', 'refusal', 'deferral', 'withdrawal', 'notice')"),
    )
    op.create_index("consent_events_user", "consent_events", ["user_id"])
