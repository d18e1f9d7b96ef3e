"""Consent events (consent, refusal, deferral, withdrawal, notice), each with its time and evidence.

A person's events are exported with their data and purged with them (the foreign key cascades);
a refusal by someone never enrolled has no user: what they said is kept, nothing that could
recognise them.
"""

from __future__ import annotations

import sqlalchemy as sa

from egomem.schemas import ConsentEvent
from egomem.store.db import Database
from egomem.store.ops.users import UserOps
from egomem.store.schema import consent_events


class ConsentOps:
    def __init__(self, db: Database, users: UserOps) -> None:
        self.db, self.users = db, users

    def record(self, event: ConsentEvent) -> ConsentEvent:
        with self.db.transaction():
            if event.user_id is not None:
                self.users.get(event.user_id)
            values = event.model_dump(exclude={"id"})
            self.db.execute(sa.insert(consent_events).values(values))
        return event

    def of_user(self, user_id: str | None) -> list[ConsentEvent]:
        """A person's events, oldest first (None: the events of people never enrolled)."""
        where = consent_events.c.user_id.is_(None) if user_id is None else consent_events.c.user_id == user_id
        rows = self.db.fetch(sa.select(consent_events).where(where).order_by(consent_events.c.at, consent_events.c.id))
        return [ConsentEvent.model_validate(dict(r)) for r in rows]

    def latest(self, user_id: str) -> ConsentEvent | None:
        """The decision in force (the newest consent or withdrawal), None when there is none."""
        events = [e for e in self.of_user(user_id) if e.kind in ("consent", "withdrawal")]
        return events[-1] if events else None
