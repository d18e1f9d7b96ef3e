"""Evidence links: which episodes said (+1) or contradicted (-1) a fact or a relation.

FactOps and RelationOps write these rows inside their own transactions, together with
the item's `support` column (the sum of its signs), so the two never disagree; this
module only writes and reads the rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import sqlalchemy as sa

from egomem.errors import NotFoundError
from egomem.schemas import Evidence
from egomem.store.db import Database
from egomem.store.schema import episodes, evidence, facts, relations

Item = Literal["fact", "relation"]
_COLUMN = {"fact": evidence.c.fact_id, "relation": evidence.c.relation_id}
_TABLE = {"fact": facts, "relation": relations}
_EPISODE = sa.select(episodes.c.id).where(episodes.c.id == sa.bindparam("id"))


class EvidenceOps:
    def __init__(self, db: Database) -> None:
        self.db = db

    def record(
        self, item: Item, item_id: str, episode_id: str | None, sign: int, at: float, source_text: str | None = None
    ) -> Evidence:
        """One row, and the item's support moved by `sign` (call inside the item's transaction)."""
        if episode_id is not None and self.db.first(_EPISODE, {"id": episode_id}) is None:
            raise NotFoundError(f"unknown episode id {episode_id!r}")
        row = Evidence(
            fact_id=item_id if item == "fact" else None,
            relation_id=item_id if item == "relation" else None,
            episode_id=episode_id,
            sign=sign,
            at=at,
            source_text=source_text,
        )
        self.db.execute(sa.insert(evidence).values(row.model_dump(exclude={"id"})))
        table = _TABLE[item]
        self.db.execute(sa.update(table).where(table.c.id == item_id).values(support=table.c.support + sign))
        return row

    def copy(self, item: Item, from_ids: Sequence[str], to_id: str) -> int:
        """Give `to_id` every evidence row of `from_ids` (a merge of duplicates); returns its support, their sum."""
        col = _COLUMN[item]
        rows = self.db.fetch(sa.select(evidence).where(col.in_(list(from_ids))).order_by(evidence.c.at, evidence.c.id))
        for r in rows:
            values = {k: r[k] for k in ("episode_id", "sign", "at", "source_text")}
            self.db.execute(sa.insert(evidence).values(**values, **{col.name: to_id}))
        support = sum(int(r["sign"]) for r in rows)
        table = _TABLE[item]
        self.db.execute(sa.update(table).where(table.c.id == to_id).values(support=support))
        return support

    def of(self, item: Item, item_id: str) -> list[Evidence]:
        query = sa.select(evidence).where(_COLUMN[item] == item_id).order_by(evidence.c.at, evidence.c.id)
        return [Evidence.model_validate(dict(r)) for r in self.db.fetch(query)]

    def of_items(self, fact_ids: Sequence[str], relation_ids: Sequence[str]) -> list[Evidence]:
        """The rows of several items at once (an export)."""
        if not fact_ids and not relation_ids:
            return []
        where = sa.or_(evidence.c.fact_id.in_(list(fact_ids)), evidence.c.relation_id.in_(list(relation_ids)))
        query = sa.select(evidence).where(where).order_by(evidence.c.at, evidence.c.id)
        return [Evidence.model_validate(dict(r)) for r in self.db.fetch(query)]
