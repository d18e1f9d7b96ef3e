"""Held sessions: what an unsure speaker said, kept out of everyone's memory until identity is settled.

The memory manager stores such a session as an episode with status HELD (its transcripts, no
participant); the runtime hands it over again for the person it turned out to be (runtime/unsure.py)
or drops it. A held episode the runtime can no longer settle (the process stopped or crashed before
the person was settled or dropped) is dropped by the sleep-time pass once it is older than
`identity.unsure_hold_s` (`drop_stale`).
"""

from __future__ import annotations

from egomem.store.base import MemoryStore

HELD = "held:identity unsure"  # the status of a held session's episode
DROPPED = "dropped"  # a held session nobody was settled for: transcripts deleted, the record kept


def drop(store: MemoryStore, episode_id: str, why: str) -> bool:
    """Delete a held session's transcripts and record why (the episode stays). False when it is not
    held (settled meanwhile, or never held)."""
    with store.transaction():
        ep = store.get_episode(episode_id)
        if ep.status != HELD:
            return False
        dropped = ep.model_copy(update={"user_transcript": "", "assistant_transcript": "", "status": DROPPED})
        store.update_episode(dropped, cause=f"held session dropped: {why}"[:1000])
    return True


def drop_stale(store: MemoryStore, *, now: float, older_than_s: float, dry_run: bool = False) -> list[str]:
    """Held sessions that ended more than `older_than_s` before `now`: dropped (listed only with `dry_run`)."""
    stale = [e.id for e in store.list_episodes(status=HELD) if now - e.end > older_than_s]
    if dry_run:
        return stale
    return [eid for eid in stale if drop(store, eid, f"identity never settled within {older_than_s:.0f} s")]
