"""The two operations that touch every table: merging two people and deleting one.

Both run in one transaction: a purge is all or nothing, and a merge never leaves a
person's data split across two ids.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import sqlalchemy as sa

from egomem.errors import StoreError
from egomem.schemas import DeletionReport, Op, User
from egomem.store.ops.history import concerns
from egomem.store.ops.relations import edges_of
from egomem.store.schema import (
    episode_participants,
    episodes,
    evidence,
    facts,
    history,
    identity_keys,
    memory_jobs,
    relations,
    users,
)

if TYPE_CHECKING:
    from egomem.store.ops.users import UserOps


def merge_users(ops: UserOps, keep_id: str, drop_id: str, *, cause: str = "") -> User:
    if keep_id == drop_id:
        raise StoreError("cannot merge a user into itself")
    db = ops.db
    with db.transaction():
        keep, drop = ops.get(keep_id), ops.get(drop_id)
        for column in (identity_keys.c.user_id, facts.c.user_id, relations.c.subject_id, relations.c.object_id):
            db.execute(sa.update(column.table).where(column == drop_id).values({column.name: keep_id}))
        # An edge between the two people becomes a self-loop after the merge: drop it.
        db.execute(sa.delete(relations).where(relations.c.subject_id == keep_id, relations.c.object_id == keep_id))
        p, q = episode_participants.alias("p"), episode_participants.alias("q")
        already = sa.select(q.c.episode_id).where(q.c.episode_id == p.c.episode_id, q.c.user_id == keep_id)
        db.execute(
            sa.insert(episode_participants).from_select(
                ["episode_id", "user_id"],
                sa.select(p.c.episode_id, sa.literal(keep_id)).where(p.c.user_id == drop_id, ~already.exists()),
            )
        )
        db.execute(sa.update(history).where(history.c.user_id == drop_id).values(user_id=keep_id))
        db.execute(sa.update(history).where(history.c.other_user_id == drop_id).values(other_user_id=keep_id))
        db.execute(sa.update(memory_jobs).where(memory_jobs.c.user_id == drop_id).values(user_id=keep_id))
        last_seen = max((t for t in (keep.last_seen, drop.last_seen) if t is not None), default=None)
        db.execute(
            sa.update(users)
            .where(users.c.id == keep_id)
            .values(
                name=keep.name or drop.name,
                placeholder=int(keep.placeholder and drop.placeholder),
                last_seen=last_seen,
            )
        )
        db.execute(sa.delete(users).where(users.c.id == drop_id))
        after = ops.get(keep_id)
        ops.log.write(
            Op.UPDATE,
            "user",
            keep_id,
            keep_id,
            {"merged": drop.model_dump(), "into": keep.model_dump()},
            after.model_dump(),
            cause or "merge",
        )
    return after


def delete_user(ops: UserOps, user_id: str, *, cause: str = "") -> DeletionReport:
    db = ops.db

    def count(table: sa.Table, where: sa.ColumnElement[bool]) -> int:
        row = db.first(sa.select(sa.func.count().label("n")).select_from(table).where(where))
        return int(row["n"]) if row else 0

    removed: dict[str, int] = {}
    with db.transaction():
        ops.get(user_id)
        others = sa.select(episode_participants.c.episode_id).where(episode_participants.c.user_id != user_id)
        solo = [
            r["episode_id"]
            for r in db.fetch(
                sa.select(episode_participants.c.episode_id).where(
                    episode_participants.c.user_id == user_id, episode_participants.c.episode_id.not_in(others)
                )
            )
        ]
        removed["identity_keys"] = count(identity_keys, identity_keys.c.user_id == user_id)
        removed["facts"] = count(facts, facts.c.user_id == user_id)
        removed["relations"] = count(relations, edges_of(user_id))
        own_facts = sa.select(facts.c.id).where(facts.c.user_id == user_id)
        own_edges = sa.select(relations.c.id).where(edges_of(user_id))
        removed["evidence"] = count(evidence, evidence.c.fact_id.in_(own_facts) | evidence.c.relation_id.in_(own_edges))
        removed["history"] = count(history, concerns(user_id))
        removed["episodes"] = len(solo)
        # Sessions of theirs still waiting for extraction: gone too, or the queue would write them back.
        removed["memory_jobs"] = count(memory_jobs, memory_jobs.c.user_id == user_id)
        db.execute(sa.delete(memory_jobs).where(memory_jobs.c.user_id == user_id))
        if solo:
            db.execute(sa.delete(episodes).where(episodes.c.id.in_(solo)))
        db.execute(sa.delete(history).where(concerns(user_id)))
        # Foreign keys cascade: identity keys, facts, relation edges (and their evidence), participations.
        db.execute(sa.delete(users).where(users.c.id == user_id))
        # The audit row names only a one-way hash: the deletion is provable, the person is gone.
        digest = hashlib.sha256(user_id.encode()).hexdigest()[:16]
        ops.log.write(Op.DELETE, "user", f"purged:{digest}", None, None, {"removed": removed}, cause)
    return DeletionReport(user_id=user_id, removed=removed)
