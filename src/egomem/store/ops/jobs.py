"""The memory-writing queue's rows (table memory_jobs): submit, claim, finish, retry, stats.

A job is one finished session waiting for extraction. `submit` is idempotent on the
job's key; `claim` hands a due job to one worker (a row lock on PostgreSQL, SKIP LOCKED
so workers never wait on each other; SQLite's write lock serialises claims); `finish`
runs inside the caller's memory-write transaction, so the memory and the job's `done`
commit together or not at all. A worker that died holding a job (kill -9, a lost host)
loses it when its lease ends, or at once when the caller can tell it is dead (`stale`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import sqlalchemy as sa

from egomem.errors import NotFoundError, StoreError
from egomem.store.db import Database
from egomem.store.schema import memory_jobs

STATUSES = ("pending", "running", "done", "failed")
# A session's second job: the language model's pass over a session the rules wrote at once
# (memory.model_pass = "after"); its key is the first job's key with this suffix.
REFINE_SUFFIX = ":refine"
JobKind = Literal["write", "refine"]
_BY_KEY = sa.select(memory_jobs).where(memory_jobs.c.key == sa.bindparam("key"))


@dataclass(frozen=True)
class MemoryJob:
    key: str
    episode_id: str
    user_id: str | None
    payload: str
    status: str
    attempts: int
    session_end: float
    enqueued_at: float
    not_before: float
    claimed_by: str | None
    claimed_at: float | None
    done_at: float | None
    outcome: str
    fallback: str
    last_error: str


@dataclass(frozen=True)
class QueueStats:
    """The queue as a reader sees it: backlog (pending + running), failures, and lag (session end to
    memory committed) over the last `window` finished jobs."""

    pending: int
    running: int
    done: int
    failed: int
    retrying: int  # pending jobs waiting out a backoff after a failed attempt
    fallbacks: int  # done jobs the rules answered (the model failed every attempt)
    oldest_pending_s: float | None  # age of the oldest session still waiting
    lag_p50_s: float | None
    lag_p95_s: float | None
    lag_window: int  # how many finished jobs the lag figures cover
    # The model's refining passes (memory.model_pass = "after"), also counted in pending / running / done /
    # failed above: how many wait or run, and their lag (session end -> the model's memory committed).
    # The lag figures above are over the first writes only.
    refine_backlog: int = 0
    refine_lag_p50_s: float | None = None
    refine_lag_p95_s: float | None = None

    @property
    def backlog(self) -> int:
        return self.pending + self.running

    def as_dict(self) -> dict[str, float | int | None]:
        return {
            "backlog": self.backlog,
            "pending": self.pending,
            "running": self.running,
            "done": self.done,
            "failed": self.failed,
            "retrying": self.retrying,
            "fallbacks": self.fallbacks,
            "oldest_pending_s": self.oldest_pending_s,
            "lag_p50_s": self.lag_p50_s,
            "lag_p95_s": self.lag_p95_s,
            "lag_window": self.lag_window,
            "refine_backlog": self.refine_backlog,
            "refine_lag_p50_s": self.refine_lag_p50_s,
            "refine_lag_p95_s": self.refine_lag_p95_s,
        }


def _job(row: Mapping[Any, Any]) -> MemoryJob:
    return MemoryJob(**{c.name: row[c.name] for c in memory_jobs.c})


class JobOps:
    def __init__(self, db: Database) -> None:
        self.db = db

    def submit(
        self, key: str, episode_id: str, payload: str, *, session_end: float, now: float, user_id: str | None = None
    ) -> bool:
        """Store a job (`user_id`: the identified speaker, if any); False (and nothing changed) when the key
        is already there."""
        with self.db.transaction():
            if self.db.first(_BY_KEY, {"key": key}) is not None:
                return False
            values = {"key": key, "episode_id": episode_id, "user_id": user_id, "payload": payload, "status": "pending"}
            times = {"session_end": session_end, "enqueued_at": now, "not_before": now}
            self.db.execute(sa.insert(memory_jobs).values(**values, **times))
        return True

    def get(self, key: str) -> MemoryJob:
        row = self.db.first(_BY_KEY, {"key": key})
        if row is None:
            raise NotFoundError(f"unknown memory job {key!r}")
        return _job(row)

    def claim(
        self,
        worker: str,
        now: float,
        *,
        lease_s: float,
        key: str | None = None,
        stale: Callable[[str], bool] = lambda _: False,
        kind: JobKind | None = None,
    ) -> MemoryJob | None:
        """The next due job (or job `key` if due), now held by `worker` with one more attempt; None if none.
        Due: pending and past its backoff, or running under a worker whose lease ended or that `stale` says
        is dead. `kind`: first writes or refining passes only; otherwise first writes come first (a
        session's memory is not kept waiting behind a model's pass over an earlier one)."""
        t = memory_jobs.c
        due = sa.or_(
            sa.and_(t.status == "pending", t.not_before <= now),
            sa.and_(t.status == "running", t.claimed_at < now - lease_s),
        )
        refining = t.key.like(f"%{REFINE_SUFFIX}")
        order = (sa.case((refining, 1), else_=0), t.not_before, t.enqueued_at, t.key)
        query = sa.select(memory_jobs).where(due).order_by(*order).limit(1)
        held = sa.select(memory_jobs).where(t.status == "running").order_by(t.enqueued_at, t.key)
        if key is not None:
            query, held = query.where(t.key == key), held.where(t.key == key)
        if kind is not None:
            only = refining if kind == "refine" else sa.not_(refining)
            query, held = query.where(only), held.where(only)
        if self.db.dialect == "postgresql":
            query, held = query.with_for_update(skip_locked=True), held.with_for_update(skip_locked=True)
        with self.db.transaction():
            row = self.db.first(query)
            if row is None:  # a job held by a worker that is gone is due at once
                row = next((r for r in self.db.fetch(held) if r["claimed_by"] and stale(str(r["claimed_by"]))), None)
            if row is None:
                return None
            values = {"status": "running", "claimed_by": worker, "claimed_at": now, "attempts": row["attempts"] + 1}
            self.db.execute(sa.update(memory_jobs).where(t.key == row["key"]).values(**values))
            return _job({**row, **values})

    def finish(self, key: str, worker: str, *, outcome: str, fallback: str = "", now: float) -> None:
        """Mark a held job done, its payload emptied (the episode keeps what memory keeps of the session).
        Call inside the transaction that writes its memory: if the job is no longer this worker's (its
        lease ended and another took it), this raises and the write rolls back."""
        self._settle(key, worker, status="done", done_at=now, outcome=outcome, fallback=fallback, payload="")

    def retry_later(self, key: str, worker: str, *, error: str, not_before: float) -> None:
        """Give a held job back, due again at `not_before` (a backoff after a failed attempt)."""
        self._settle(key, worker, status="pending", not_before=not_before, last_error=error[:1000])

    def fail(self, key: str, worker: str, *, error: str, now: float) -> None:
        """A job that cannot succeed (a payload that does not decode): kept, visible, never retried."""
        self._settle(key, worker, status="failed", done_at=now, last_error=error[:1000])

    def _settle(self, key: str, worker: str, **values: object) -> None:
        t = memory_jobs.c
        query = sa.select(t.status, t.claimed_by).where(t.key == key)
        if self.db.dialect == "postgresql":
            query = query.with_for_update()
        with self.db.transaction():
            row = self.db.first(query)
            if row is None:
                raise NotFoundError(f"unknown memory job {key!r}")
            if row["status"] != "running" or row["claimed_by"] != worker:
                raise StoreError(f"memory job {key} is no longer held by {worker}: its result is not written")
            self.db.execute(
                sa.update(memory_jobs).where(t.key == key).values(claimed_by=None, claimed_at=None, **values)
            )

    def keys(self, status: str) -> list[str]:
        t = memory_jobs.c
        return [str(r[0]) for r in self.db.fetch_tuples(sa.select(t.key).where(t.status == status).order_by(t.key))]

    def all(self) -> list[MemoryJob]:
        return [_job(r) for r in self.db.fetch(sa.select(memory_jobs).order_by(memory_jobs.c.enqueued_at))]

    def stats(self, now: float, *, window: int = 500) -> QueueStats:
        t = memory_jobs.c
        counts = {s: 0 for s in STATUSES}
        for status, n in self.db.fetch_tuples(sa.select(t.status, sa.func.count()).group_by(t.status)):
            counts[str(status)] = int(n)
        retrying = self._count(sa.and_(t.status == "pending", t.attempts > 0))
        fallbacks = self._count(sa.and_(t.status == "done", t.fallback != ""))
        oldest = self.db.fetch_tuples(sa.select(sa.func.min(t.session_end)).where(t.status.in_(["pending", "running"])))
        first = oldest[0][0] if oldest else None
        refining = t.key.like(f"%{REFINE_SUFFIX}")

        def lags_of(which: sa.ColumnElement[bool]) -> np.ndarray:
            done = sa.and_(t.status == "done", which)
            recent = sa.select(t.done_at - t.session_end).where(done).order_by(t.done_at.desc()).limit(window)
            return np.array([float(r[0]) for r in self.db.fetch_tuples(recent)], dtype=float)

        lags, refine_lags = lags_of(sa.not_(refining)), lags_of(refining)
        refine_backlog = self._count(sa.and_(t.status.in_(["pending", "running"]), refining))
        return QueueStats(
            pending=counts["pending"],
            running=counts["running"],
            done=counts["done"],
            failed=counts["failed"],
            retrying=retrying,
            fallbacks=fallbacks,
            oldest_pending_s=None if first is None else max(0.0, now - float(first)),
            lag_p50_s=float(np.percentile(lags, 50)) if lags.size else None,
            lag_p95_s=float(np.percentile(lags, 95)) if lags.size else None,
            lag_window=int(lags.size),
            refine_backlog=refine_backlog,
            refine_lag_p50_s=float(np.percentile(refine_lags, 50)) if refine_lags.size else None,
            refine_lag_p95_s=float(np.percentile(refine_lags, 95)) if refine_lags.size else None,
        )

    def _count(self, where: sa.ColumnElement[bool]) -> int:
        rows = self.db.fetch_tuples(sa.select(sa.func.count()).select_from(memory_jobs).where(where))
        return int(rows[0][0]) if rows else 0
