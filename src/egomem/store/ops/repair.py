"""Repairing identity mistakes: merge two people, split a person by episode, undo either.

An identity decision that put one person's words on another (a false merge) is repaired by a
split: the episodes named move to another person (a new one, or `into` an existing one), and
with them, by their provenance, everything learnt from those episodes: facts and relations
whose `source_episode` is one of them, identity keys added from them (the ones the session
stored, named in their history row, and the ones enrolled or refreshed during the episode's
time span), and the history rows of what moved. What those episodes did to the person who
stays is taken back: their evidence rows on the facts and relations that stay are removed
(support adjusted), and what they closed (an UPDATE or a retraction: -1 from them, or a fact
superseded by a fact that moves) is current again. A false split is repaired by a merge.

Each repair writes every row it changes into `repairs` (store/ops/changes.py) and one history
row; `undo` puts exactly those rows back, refusing (one line, nothing changed) when a row it
would restore has changed since, or when memory was added since to a person the repair created.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import RowMapping

from egomem.errors import NotFoundError, StoreError
from egomem.schemas import Op, Repair, User, now
from egomem.store.db import Database, is_row_id
from egomem.store.ops import changes
from egomem.store.ops.changes import Changes
from egomem.store.ops.history import HistoryOps
from egomem.store.ops.users import UserOps, clean_name
from egomem.store.schema import (
    episode_participants,
    episodes,
    evidence,
    facts,
    history,
    identity_keys,
    relations,
    repairs,
    users,
)


def _repair(row: RowMapping) -> Repair:
    detail = json.loads(row["detail_json"])
    return Repair(
        id=row["id"],
        at=row["at"],
        kind=row["kind"],
        user_id=row["user_id"],
        other_user_id=row["other_user_id"],
        episodes=detail.get("episodes", []),
        moved=detail.get("moved", {}),
        other_name=detail.get("merged", {}).get("name"),
        cause=row["cause"],
        undone_at=row["undone_at"],
    )


class RepairOps:
    def __init__(self, db: Database, log: HistoryOps, users: UserOps) -> None:
        self.db, self.log, self.users = db, log, users

    # -- reading -------------------------------------------------------------------------
    def get(self, repair_id: int) -> Repair:
        if not is_row_id(repair_id):
            raise NotFoundError(f"unknown repair id {repair_id!r}")
        row = self.db.first(sa.select(repairs).where(repairs.c.id == int(repair_id)))
        if row is None:
            raise NotFoundError(f"unknown repair id {repair_id!r}")
        return _repair(row)

    def all(self, user_id: str | None = None) -> list[Repair]:
        query = sa.select(repairs)
        if user_id is not None:
            query = query.where(sa.or_(repairs.c.user_id == user_id, repairs.c.other_user_id == user_id))
        return [_repair(r) for r in self.db.fetch(query.order_by(repairs.c.id))]

    def version(self) -> tuple[int, int]:
        """(repairs made, repairs undone): it changes whenever a repair moves identity keys between people."""
        row = self.db.first(
            sa.select(sa.func.count().label("n"), sa.func.count(repairs.c.undone_at).label("undone")).select_from(
                repairs
            )
        )
        return (int(row["n"]), int(row["undone"])) if row else (0, 0)

    # -- merge -----------------------------------------------------------------------------
    def merge(self, keep_id: str, drop_id: str, *, cause: str = "") -> Repair:
        """Move everything of `drop_id` onto `keep_id` and remove `drop_id` (undoable)."""
        if keep_id == drop_id:
            raise StoreError("cannot merge a user into itself")
        with self.db.transaction():
            keep, drop = self.users.get(keep_id), self.users.get(drop_id)
            ch = Changes(self.db)
            moved = {
                "keys": ch.update_many(identity_keys, identity_keys.c.user_id == drop_id, {"user_id": keep_id}),
                "facts": ch.update_many(facts, facts.c.user_id == drop_id, {"user_id": keep_id}),
                "relations": ch.update_many(relations, relations.c.subject_id == drop_id, {"subject_id": keep_id})
                + ch.update_many(relations, relations.c.object_id == drop_id, {"object_id": keep_id}),
            }
            # An edge between the two people becomes a self-loop after the merge: dropped (undo restores it).
            loops = sa.select(relations.c.id).where(relations.c.subject_id == keep_id, relations.c.object_id == keep_id)
            ch.delete_many(evidence, evidence.c.relation_id.in_(loops))
            moved["self_loops_removed"] = ch.delete_many(relations, relations.c.id.in_(loops))
            moved["episodes"] = self._move_participation(ch, drop_id, keep_id, None)
            ch.update_many(history, history.c.user_id == drop_id, {"user_id": keep_id})
            ch.update_many(history, history.c.other_user_id == drop_id, {"other_user_id": keep_id})
            last_seen = max((t for t in (keep.last_seen, drop.last_seen) if t is not None), default=None)
            values = {
                "name": keep.name or drop.name,
                "placeholder": int(keep.placeholder and drop.placeholder),
                "last_seen": last_seen,
            }
            ch.update(users, {"id": keep_id}, values)
            ch.delete(users, {"id": drop_id})
            after = self.users.get(keep_id)
            detail = {"merged": drop.model_dump(), "into": keep.model_dump(), "moved": moved}
            repair = self._record("merge", keep_id, drop_id, detail, ch, cause or "merge")
            self.log.write(
                Op.UPDATE, "user", keep_id, keep_id, detail, after.model_dump(), cause or "merge", other_user_id=drop_id
            )
        return repair

    # -- split -----------------------------------------------------------------------------
    def split(
        self,
        user_id: str,
        episode_ids: Sequence[str],
        *,
        into: str | None = None,
        name: str | None = None,
        key_ids: Sequence[int] = (),
        cause: str = "",
    ) -> Repair:
        """Give the episodes `episode_ids` of `user_id`, and what was learnt from them, to another
        person: `into` (an existing user) or a new one (named `name`). Undoable."""
        episode_ids = list(dict.fromkeys(episode_ids))
        if not episode_ids:
            raise StoreError("a split needs at least one episode")
        if into is not None and name is not None:
            raise StoreError("give either into (an existing person) or name (a new one), not both")
        with self.db.transaction():
            self.users.get(user_id)
            self._check_episodes(user_id, episode_ids)
            keys = self._keys_from(user_id, episode_ids, key_ids)
            ch = Changes(self.db)
            if into is None:
                target = User(name=clean_name(name))
                ch.insert(users, {**target.model_dump(), "placeholder": 0})
            else:
                if into == user_id:
                    raise StoreError("cannot split a user into itself")
                target = self.users.get(into)
            moved = self._split_rows(ch, user_id, target.id, episode_ids, keys)
            detail = {"episodes": episode_ids, "moved": moved}
            repair = self._record("split", user_id, target.id, detail, ch, cause or "split")
            self.log.write(Op.UPDATE, "user", user_id, user_id, None, detail, cause or "split", other_user_id=target.id)
        return repair

    def _check_episodes(self, user_id: str, episode_ids: list[str]) -> None:
        for episode_id in episode_ids:
            if self.db.first(sa.select(episodes.c.id).where(episodes.c.id == episode_id)) is None:
                raise NotFoundError(f"unknown episode id {episode_id!r}")
            took_part = sa.select(episode_participants.c.user_id).where(
                episode_participants.c.episode_id == episode_id, episode_participants.c.user_id == user_id
            )
            if self.db.first(took_part) is None:
                raise StoreError(f"episode {episode_id} is not one of {user_id}'s episodes")

    def _keys_from(self, user_id: str, episode_ids: list[str], key_ids: Sequence[int]) -> list[int]:
        """The user's keys that came from these episodes, and the ones named (which must be the user's)."""
        own = sa.select(identity_keys.c.id).where(identity_keys.c.user_id == user_id)
        for key_id in key_ids:
            if not is_row_id(key_id) or self.db.first(own.where(identity_keys.c.id == int(key_id))) is None:
                raise StoreError(f"key {key_id} is not one of {user_id}'s keys")
        spans = self.db.fetch(sa.select(episodes.c.start_t, episodes.c.end_t).where(episodes.c.id.in_(episode_ids)))
        # Enrolled or refreshed while the episode went on (the store's clock is the wall clock).
        during = [identity_keys.c.created_at.between(r["start_t"], r["end_t"]) for r in spans]
        found = {int(r["id"]) for r in self.db.fetch(own.where(sa.or_(*during)))}
        # Stored by the session of the episode (memory/manager.py names it in the key's history row).
        causes = [history.c.cause == f"session {e}" for e in episode_ids]
        added = sa.select(history.c.entity_id).where(
            history.c.entity == "key", history.c.op == Op.ADD.value, history.c.user_id == user_id, sa.or_(*causes)
        )
        named = {int(r["entity_id"]) for r in self.db.fetch(added)}
        found |= {int(r["id"]) for r in self.db.fetch(own.where(identity_keys.c.id.in_(named)))}
        return sorted(found | {int(k) for k in key_ids})

    def _split_rows(
        self, ch: Changes, user_id: str, target_id: str, episode_ids: list[str], key_ids: list[int]
    ) -> dict[str, int]:
        from_them = facts.c.source_episode.in_(episode_ids)
        moving_facts = [
            r["id"] for r in self.db.fetch(sa.select(facts.c.id).where(facts.c.user_id == user_id, from_them))
        ]
        edge = relations.c.source_episode.in_(episode_ids)
        moving_edges = [
            r["id"]
            for r in self.db.fetch(
                sa.select(relations.c.id).where(
                    edge, sa.or_(relations.c.subject_id == user_id, relations.c.object_id == user_id)
                )
            )
        ]
        moved = {"facts": len(moving_facts), "relations": len(moving_edges), "keys": len(key_ids)}
        ch.update_many(facts, facts.c.id.in_(moving_facts), {"user_id": target_id})
        ch.update_many(
            relations, relations.c.id.in_(moving_edges) & (relations.c.subject_id == user_id), {"subject_id": target_id}
        )
        ch.update_many(
            relations, relations.c.id.in_(moving_edges) & (relations.c.object_id == user_id), {"object_id": target_id}
        )
        loops = sa.select(relations.c.id).where(relations.c.subject_id == target_id, relations.c.object_id == target_id)
        ch.delete_many(evidence, evidence.c.relation_id.in_(loops))
        moved["self_loops_removed"] = ch.delete_many(relations, relations.c.id.in_(loops))
        ch.update_many(identity_keys, identity_keys.c.id.in_(key_ids), {"user_id": target_id})
        moved["episodes"] = self._move_participation(ch, user_id, target_id, episode_ids)
        moved["evidence_removed"], moved["reopened"] = self._take_back(ch, user_id, episode_ids, moving_facts)
        # What moved is the other person's: so is its history (a deletion of them purges it).
        entities = [("fact", f) for f in moving_facts] + [("key", str(k)) for k in key_ids]
        entities += [("relation", r) for r in moving_edges] + [("episode", e) for e in episode_ids]
        for entity, entity_id in entities:
            rows = (history.c.entity == entity) & (history.c.entity_id == entity_id)
            ch.update_many(history, rows & (history.c.user_id == user_id), {"user_id": target_id})
            ch.update_many(history, rows & (history.c.other_user_id == user_id), {"other_user_id": target_id})
        return moved

    def _take_back(self, ch: Changes, user_id: str, episode_ids: list[str], moving_facts: list[str]) -> tuple[int, int]:
        """Remove what the episodes said about what stays with `user_id` (their +1 and -1 evidence) and
        make current again what they closed. Returns (evidence rows removed, items reopened)."""
        removed = reopened = 0
        for table, column in ((facts, evidence.c.fact_id), (relations, evidence.c.relation_id)):
            owner = table.c.user_id == user_id if table is facts else relations.c.subject_id == user_id
            if table is relations:
                owner = owner | (relations.c.object_id == user_id)
            staying = sa.select(table.c.id).where(owner)
            rows = self.db.fetch(
                sa.select(evidence.c.id, column.label("item"), evidence.c.sign).where(
                    column.in_(staying), evidence.c.episode_id.in_(episode_ids)
                )
            )
            by_item: dict[str, list[RowMapping]] = {}
            for r in rows:
                by_item.setdefault(str(r["item"]), []).append(r)
            for item_id, item_rows in by_item.items():
                for r in item_rows:
                    ch.delete(evidence, {"id": int(r["id"])})
                state = self.db.first(sa.select(table.c.support, table.c.valid_to).where(table.c.id == item_id))
                assert state is not None
                values: dict[str, Any] = {"support": int(state["support"]) - sum(int(r["sign"]) for r in item_rows)}
                if state["valid_to"] is not None and any(int(r["sign"]) < 0 for r in item_rows):
                    values["valid_to"] = None  # closed by what these episodes said: current again
                    if table is facts:
                        values["superseded_by"] = None
                    reopened += 1
                ch.update(table, {"id": item_id}, values)
                removed += len(item_rows)
        if moving_facts:  # a fact of the person who stays, replaced by one of the other person's (no -1 row)
            replaced = (facts.c.user_id == user_id) & facts.c.superseded_by.in_(moving_facts)
            reopened += ch.update_many(facts, replaced, {"valid_to": None, "superseded_by": None})
        return removed, reopened

    def _move_participation(self, ch: Changes, from_id: str, to_id: str, episode_ids: list[str] | None) -> int:
        """Move `from_id`'s part in episodes (all of them, or `episode_ids`) to `to_id`."""
        mine = episode_participants.c.user_id == from_id
        if episode_ids is not None:
            mine = mine & episode_participants.c.episode_id.in_(episode_ids)
        moving = [str(r["episode_id"]) for r in self.db.fetch(sa.select(episode_participants.c.episode_id).where(mine))]
        theirs = {
            str(r["episode_id"])
            for r in self.db.fetch(
                sa.select(episode_participants.c.episode_id).where(
                    episode_participants.c.user_id == to_id, episode_participants.c.episode_id.in_(moving)
                )
            )
        }
        for episode_id in moving:
            ch.delete(episode_participants, {"episode_id": episode_id, "user_id": from_id})
            if episode_id not in theirs:
                ch.insert(episode_participants, {"episode_id": episode_id, "user_id": to_id})
        return len(moving)

    # -- undo --------------------------------------------------------------------------------
    def undo(self, repair_id: int, *, cause: str = "") -> Repair:
        """Put back exactly the rows the repair changed; a repair is undone once."""
        if not is_row_id(repair_id):
            raise NotFoundError(f"unknown repair id {repair_id!r}")
        with self.db.transaction():
            # FOR UPDATE (PostgreSQL; SQLite's write lock is already held): two undos of one repair queue.
            row = self.db.first(sa.select(repairs).where(repairs.c.id == int(repair_id)).with_for_update())
            if row is None:
                raise NotFoundError(f"unknown repair id {repair_id!r}")
            if row["undone_at"] is not None:
                raise StoreError(f"repair {repair_id} was already undone")
            changes.undo(self.db, json.loads(row["changes_json"]))
            self.db.execute(sa.update(repairs).where(repairs.c.id == int(repair_id)).values(undone_at=now()))
            repair = self.get(repair_id)
            self.log.write(
                Op.UPDATE,
                "repair",
                str(repair_id),
                repair.user_id,
                {"undone": False, "kind": repair.kind},
                {"undone": True},
                cause or "undo",
                other_user_id=repair.other_user_id,
            )
        return repair

    def _record(
        self, kind: str, user_id: str, other_id: str, detail: dict[str, Any], ch: Changes, cause: str
    ) -> Repair:
        row = self.db.first(
            sa.insert(repairs)
            .values(
                at=now(),
                kind=kind,
                user_id=user_id,
                other_user_id=other_id,
                detail_json=json.dumps(detail, default=str),
                changes_json=json.dumps(ch.rows, default=str),
                cause=cause,
            )
            .returning(repairs.c.id)
        )
        assert row is not None
        return self.get(int(row["id"]))
