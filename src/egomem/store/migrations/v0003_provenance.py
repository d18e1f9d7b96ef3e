"""Schema version 3: where each fact and relation came from, and repairs that can be undone.

Frozen (see v0001). Facts and relations get their provenance beyond `source_episode`:
`source_turns` (JSON: the [start, end] stream seconds of the user turns the item was said
in), `identity_status` and `identity_llr` (the identity decision that put the item on its
person: KNOWN/NEW/UNSURE/... and its fused calibrated log-likelihood ratio). Existing items
have none (NULL: not recorded). Table `repairs` holds each merge or split of people with the
exact rows it changed (before and after), so a repair can be undone.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic.operations import Operations

VERSION = 3

_REAL = sa.DOUBLE_PRECISION
_ROW_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _provenance() -> list[sa.Column[object]]:
    return [
        sa.Column("source_turns", sa.Text),
        sa.Column("identity_status", sa.Text),
        sa.Column("identity_llr", _REAL),
    ]


def upgrade(op: Operations, dialect: str) -> None:
    # Nullable columns: SQLite adds them by ALTER TABLE, no table rebuild.
    for table in ("facts", "relations"):
        for column in _provenance():
            op.add_column(table, column)
    op.create_table(
        "repairs",
        sa.Column("id", _ROW_ID, sa.Identity(), primary_key=True),
        sa.Column("at", _REAL, nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("user_id", sa.Text, nullable=False),
        sa.Column("other_user_id", sa.Text, nullable=False),
        sa.Column("detail_json", sa.Text, nullable=False),
        sa.Column("changes_json", sa.Text, nullable=False),
        sa.Column("cause", sa.Text, nullable=False, server_default=""),
        sa.Column("undone_at", _REAL),
        sa.CheckConstraint("kind IN ('merge', 'split')"),
    )
    op.create_index("repairs_user", "repairs", ["user_id"])
    op.create_index("repairs_other_user", "repairs", ["other_user_id"])
