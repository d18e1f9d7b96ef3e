"""Schema version 5: identity keys sealed at rest (store/crypto.py, docs/privacy.md "Keys at rest").

Frozen (see v0001). `identity_keys.sealed` says whether `vector` holds the sealed key (1) or the
plaintext float32 key (0: every key written before this version), and `data_key` whose data key
sealed it; a partial index finds the plaintext ones, which the store seals right after migrating, in
the same transaction, so an upgraded store holds no plaintext key (store/base.py). On PostgreSQL the
keyring (each person's wrapped data key, and the master key's check value) lives in the store's
schema; SQLite keeps it in its own file, created by the keyring itself. A store at version 5 is
refused by older egomem, which would read sealed bytes as a vector.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic.operations import Operations

VERSION = 5

_REAL = sa.DOUBLE_PRECISION


def upgrade(op: Operations, dialect: str) -> None:
    op.add_column("identity_keys", sa.Column("sealed", sa.Integer, nullable=False, server_default=sa.text("0")))
    op.add_column("identity_keys", sa.Column("data_key", sa.Text))
    unsealed = sa.text("sealed = 0")
    op.create_index("identity_keys_unsealed", "identity_keys", ["id"], sqlite_where=unsealed, postgresql_where=unsealed)
    if dialect == "postgresql":
        op.create_table(
            "data_keys",
            sa.Column("user_id", sa.Text, primary_key=True),
            sa.Column("wrapped", sa.LargeBinary, nullable=False),
            sa.Column("created_at", _REAL, nullable=False),
        )
        op.create_table(
            "keyring_check",
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
            sa.Column("sealed", sa.LargeBinary, nullable=False),
        )
