"""Schema version 2: evidence weights on facts and relations, and the episodes behind them.

Frozen (see v0001). Facts and relations get `support` (an integer, 1 for what exists:
each was learnt from one piece of evidence), and the table `evidence` links each item to
every episode that said it (+1) or contradicted it (-1). The existing items' origin
(`source_episode`, kept as it is) is copied into `evidence` as their first +1 row, so
an item's support is the sum of its evidence signs from the start.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic.operations import Operations

VERSION = 2

_REAL = sa.DOUBLE_PRECISION
_ROW_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _support() -> sa.Column[int]:
    return sa.Column("support", sa.Integer, nullable=False, server_default=sa.text("1"))


def upgrade(op: Operations, dialect: str) -> None:
    # SQLite adds a NOT NULL column with a constant default by ALTER TABLE, no table rebuild.
    op.add_column("facts", _support())
    op.add_column("relations", _support())
    op.create_table(
        "evidence",
        sa.Column("id", _ROW_ID, sa.Identity(), primary_key=True),
        sa.Column("fact_id", sa.Text, sa.ForeignKey("facts.id", ondelete="CASCADE")),
        sa.Column("relation_id", sa.Text, sa.ForeignKey("relations.id", ondelete="CASCADE")),
        sa.Column("episode_id", sa.Text, sa.ForeignKey("episodes.id", ondelete="SET NULL")),
        sa.Column("sign", sa.Integer, nullable=False),
        sa.Column("at", _REAL, nullable=False),
        sa.Column("source_text", sa.Text),
        sa.CheckConstraint("sign IN (1, -1)"),
        sa.CheckConstraint("(fact_id IS NULL) <> (relation_id IS NULL)"),
    )
    op.create_index("evidence_fact", "evidence", ["fact_id"])
    op.create_index("evidence_relation", "evidence", ["relation_id"])
    op.create_index("evidence_episode", "evidence", ["episode_id"])
    op.execute(
        "INSERT INTO evidence (fact_id, episode_id, sign, at, source_text)"
        " SELECT id, source_episode, 1, valid_from, source_text FROM facts ORDER BY valid_from, id"
    )
    op.execute(
        "INSERT INTO evidence (relation_id, episode_id, sign, at)"
        " SELECT id, source_episode, 1, valid_from FROM relations ORDER BY valid_from, id"
    )
