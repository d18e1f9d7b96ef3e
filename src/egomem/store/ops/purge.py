"""Deleting a person: the operation that touches every table (merging and splitting people, which
can be undone, are store/ops/repair.py).

It runs in one transaction: a purge is all or nothing.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import sqlalchemy as sa

from egomem.schemas import DeletionReport, Op
from egomem.store.ops.history import concerns
from egomem.store.ops.relations import edges_of
from egomem.store.schema import (
    KEY_COLUMNS,
    consent_events,
    episode_participants,
    episodes,
    evidence,
    facts,
    history,
    identity_keys,
    memory_jobs,
    relations,
    repairs,
    users,
)

if TYPE_CHECKING:
    from egomem.store.ops.users import UserOps


def _shred_data_keys(ops: UserOps, user_id: str) -> None:
    """Crypto-shredding: destroy the data keys that seal the person's identity keys, i.e. their own and
    those of people merged into them (who are no one else now). Keys of someone else still sealed under
    one of them (a split gave them away) are re-sealed under their person's data key first. Without such
    keys the data keys go at once: in a keyring of its own (SQLite) that commits now, so even if deleting
    the rows fails, the person's sealed keys no longer open; with them, once the re-sealing committed."""
    from egomem.store.ops.keys import reseal_for_their_person  # keys.py imports users.py, which imports this

    db = ops.db
    sealers = {
        str(r[0])
        for r in db.fetch_tuples(
            sa.select(identity_keys.c.data_key)
            .where(identity_keys.c.user_id == user_id, identity_keys.c.data_key.is_not(None))
            .distinct()
        )
    }
    alive = {str(r[0]) for r in db.fetch_tuples(sa.select(users.c.id).where(users.c.id.in_(sealers - {user_id})))}
    doomed = ({user_id} | sealers) - alive
    theirs = db.fetch(
        sa.select(*KEY_COLUMNS).where(identity_keys.c.data_key.in_(doomed), identity_keys.c.user_id != user_id)
    )
    reseal_for_their_person(db, ops.keyring, theirs)

    def shred() -> None:
        for owner in sorted(doomed):
            ops.keyring.destroy(owner)

    if theirs:
        db.after_commit(shred)
    else:
        shred()


def delete_user(ops: UserOps, user_id: str, *, cause: str = "") -> DeletionReport:
    db = ops.db

    def count(table: sa.Table, where: sa.ColumnElement[bool]) -> int:
        row = db.first(sa.select(sa.func.count().label("n")).select_from(table).where(where))
        return int(row["n"]) if row else 0

    removed: dict[str, int] = {}
    with db.transaction():
        ops.get(user_id)
        _shred_data_keys(ops, user_id)
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
        removed["consent_events"] = count(consent_events, consent_events.c.user_id == user_id)
        removed["episodes"] = len(solo)
        # Sessions of theirs still waiting for extraction: gone too, or the queue would write them back.
        removed["memory_jobs"] = count(memory_jobs, memory_jobs.c.user_id == user_id)
        db.execute(sa.delete(memory_jobs).where(memory_jobs.c.user_id == user_id))
        # A repair of this person holds copies of their rows (to undo it): it goes with them.
        theirs = (repairs.c.user_id == user_id) | (repairs.c.other_user_id == user_id)
        removed["repairs"] = count(repairs, theirs)
        db.execute(sa.delete(repairs).where(theirs))
        if solo:
            db.execute(sa.delete(episodes).where(episodes.c.id.in_(solo)))
        db.execute(sa.delete(history).where(concerns(user_id)))
        # Foreign keys cascade: identity keys, facts, relation edges (and their evidence), participations.
        db.execute(sa.delete(users).where(users.c.id == user_id))
        # The audit row names only a one-way hash: the deletion is provable, the person is gone.
        digest = hashlib.sha256(user_id.encode()).hexdigest()[:16]
        ops.log.write(Op.DELETE, "user", f"purged:{digest}", None, None, {"removed": removed}, cause)
    return DeletionReport(user_id=user_id, removed=removed)
