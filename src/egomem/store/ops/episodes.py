"""Episodes (dialog sessions) and who took part in them."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import RowMapping

from egomem.errors import NotFoundError, StoreError
from egomem.schemas import Episode, Op
from egomem.store.db import Database
from egomem.store.ops.history import HistoryOps
from egomem.store.ops.users import UserOps
from egomem.store.schema import episode_participants, episodes


def _columns(episode: Episode) -> dict[str, object]:
    return {
        "start_t": episode.start,
        "end_t": episode.end,
        "user_transcript": episode.user_transcript,
        "assistant_transcript": episode.assistant_transcript,
        "summary": episode.summary,
        "status": episode.status,
    }


# Built once: the hot read paths skip statement construction and SQLAlchemy's cache-key work.
_PARTICIPANTS = (
    sa.select(episode_participants.c.user_id)
    .where(episode_participants.c.episode_id == sa.bindparam("episode_id"))
    .order_by(episode_participants.c.user_id)
)
_BY_ID = sa.select(episodes).where(episodes.c.id == sa.bindparam("id"))


class EpisodeOps:
    def __init__(self, db: Database, log: HistoryOps, users: UserOps) -> None:
        self.db, self.log, self.users = db, log, users

    def _episode(self, row: RowMapping) -> Episode:
        parts = self.db.fetch(_PARTICIPANTS, {"episode_id": row["id"]})
        return Episode(
            id=row["id"],
            start=row["start_t"],
            end=row["end_t"],
            user_transcript=row["user_transcript"],
            assistant_transcript=row["assistant_transcript"],
            summary=row["summary"],
            status=row["status"],
            created_at=row["created_at"],
            participants=[p["user_id"] for p in parts],
        )

    def _write_participants(self, episode: Episode) -> None:
        self.db.execute(sa.delete(episode_participants).where(episode_participants.c.episode_id == episode.id))
        for user_id in dict.fromkeys(episode.participants):
            self.users.get(user_id)
            self.db.execute(sa.insert(episode_participants).values(episode_id=episode.id, user_id=user_id))

    def add(self, episode: Episode, *, cause: str = "") -> Episode:
        if episode.end < episode.start:
            raise StoreError("an episode cannot end before it starts")
        with self.db.transaction():
            self.db.execute(
                sa.insert(episodes).values(id=episode.id, created_at=episode.created_at, **_columns(episode))
            )
            self._write_participants(episode)
            for user_id in dict.fromkeys(episode.participants):
                after = {"start": episode.start, "end": episode.end}
                self.log.write(Op.ADD, "episode", episode.id, user_id, None, after, cause)
        return self.get(episode.id)

    def get(self, episode_id: str) -> Episode:
        row = self.db.first(_BY_ID, {"id": episode_id})
        if row is None:
            raise NotFoundError(f"unknown episode id {episode_id!r}")
        return self._episode(row)

    def update(self, episode: Episode, *, cause: str = "") -> Episode:
        with self.db.transaction():
            self.get(episode.id)
            self.db.execute(sa.update(episodes).where(episodes.c.id == episode.id).values(**_columns(episode)))
            self._write_participants(episode)
            for user_id in dict.fromkeys(episode.participants):
                self.log.write(Op.UPDATE, "episode", episode.id, user_id, None, {"status": episode.status}, cause)
        return self.get(episode.id)

    def all(self, user_id: str | None = None, *, status: str | None = None) -> list[Episode]:
        query = sa.select(episodes)
        if status is not None:
            query = query.where(episodes.c.status == status)
        if user_id is not None:
            took_part = sa.select(episode_participants.c.episode_id).where(episode_participants.c.user_id == user_id)
            query = query.where(episodes.c.id.in_(took_part))
        return [self._episode(r) for r in self.db.fetch(query.order_by(episodes.c.start_t, episodes.c.id))]
