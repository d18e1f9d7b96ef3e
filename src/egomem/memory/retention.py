"""Retention of biometric keys: a person's face and voice keys are deleted a set time after
they were last seen (`[retention]`, default 3 years for both); their facts stay.

"Last seen" is the latest of the person's `last_seen` (set by the identity poll and by each
stored session), their newest key of that modality (a refreshed key means they were
recognised) and the person's creation: never earlier than the evidence the store holds.
The plan and the deletions run in one transaction, so a person seen while it runs keeps
their keys, and an interrupted pass deletes nothing. Keys are deleted through the store's
own operation (`MemoryStore.delete_key`), which writes its history row.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from egomem.config import RetentionConfig
from egomem.memory.strength import DAY_S
from egomem.schemas import IdentityKey, Modality, User
from egomem.store.base import MemoryStore


@dataclass(frozen=True)
class KeyExpiry:
    """One person's keys of one modality that outlived the limit."""

    user_id: str
    name: str | None
    modality: Modality
    key_ids: tuple[int, ...]
    last_seen: float
    limit_days: float

    def describe(self, now: float) -> str:
        who = self.name or self.user_id
        days = (now - self.last_seen) / DAY_S
        return (
            f"{who} ({self.user_id}): {len(self.key_ids)} {self.modality.value} key(s), "
            f"last seen {days:.0f} days ago (limit {self.limit_days:g} days)"
        )


@dataclass
class RetentionReport:
    expired: list[KeyExpiry] = field(default_factory=list)
    dry_run: bool = False

    @property
    def keys(self) -> int:
        return sum(len(e.key_ids) for e in self.expired)


def limits(config: RetentionConfig) -> dict[Modality, float]:
    """Days each modality's keys are kept after the person was last seen (unlimited ones left out)."""
    days = {Modality.FACE: config.face_keys_days, Modality.VOICE: config.voice_keys_days}
    return {m: d for m, d in days.items() if d is not None}


def plan(store: MemoryStore, config: RetentionConfig, *, now: float) -> list[KeyExpiry]:
    """The keys that are past their limit now, per person and modality (nothing is changed)."""
    out: list[KeyExpiry] = []
    people = {u.id: u for u in store.list_users()}
    for modality, days in limits(config).items():
        by_user: dict[str, list[IdentityKey]] = {}
        for key in store.list_keys(modality):
            by_user.setdefault(key.user_id, []).append(key)
        for user_id, keys in by_user.items():
            user = people.get(user_id)
            if user is None:
                continue
            seen = _last_seen(user, keys)
            if now - seen > days * DAY_S:
                ids = tuple(k.id for k in keys if k.id is not None)
                out.append(KeyExpiry(user_id, user.name, modality, ids, seen, days))
    return out


def apply(store: MemoryStore, config: RetentionConfig, *, now: float, dry_run: bool = False) -> RetentionReport:
    """Delete the expired keys (a dry run only reports them)."""
    with store.transaction():
        report = RetentionReport(plan(store, config, now=now), dry_run=dry_run)
        if not dry_run:
            for e in report.expired:
                cause = f"retention: {e.modality.value} keys kept {e.limit_days:g} days after the person was last seen"
                for key_id in e.key_ids:
                    store.delete_key(key_id, cause=cause)
    return report


def _last_seen(user: User, keys: list[IdentityKey]) -> float:
    times = [user.created_at, *(k.created_at for k in keys)]
    if user.last_seen is not None:
        times.append(user.last_seen)
    return max(times)
