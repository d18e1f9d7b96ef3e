"""Store a written conversation (a transcript with speakers) as episodes, turns kept.

Each speaker becomes a user (an existing real user of exactly that name is reused), each
session one episode: its speaker-tagged turns (`search.encode_turns`), its participants,
and its start time (one minute per turn as its length). What `search` and `ask` read is
exactly what is stored here; LoCoMo's benchmarks ingest through this.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from egomem.retrieval.search import EpisodeTurn, encode_turns
from egomem.schemas import Episode
from egomem.store.base import MemoryStore

SECONDS_PER_TURN = 60.0


@dataclass(frozen=True)
class StoredSession:
    episode: Episode
    kept: list[int]  # stored turn i (as `episode_turns` reads it back) is input turn kept[i]


def store_conversation(
    store: MemoryStore, sessions: Sequence[tuple[float, Sequence[EpisodeTurn]]], *, cause: str
) -> list[StoredSession]:
    """Write each (start time, turns) session as one episode, in one transaction."""
    out: list[StoredSession] = []
    with store.transaction():
        users: dict[str, str] = {}
        for _, turns in sessions:
            for t in turns:
                if t.speaker and t.speaker not in users:
                    users[t.speaker] = _user(store, t.speaker, cause)
        for start, turns in sessions:
            ep = Episode(
                start=start,
                end=start + SECONDS_PER_TURN * len(turns),
                participants=[users[s] for s in dict.fromkeys(t.speaker for t in turns) if s in users],
                user_transcript=encode_turns(turns),
            )
            store.add_episode(ep, cause=cause)
            out.append(StoredSession(ep, [i for i, t in enumerate(turns) if t.text.strip()]))
    return out


def _user(store: MemoryStore, name: str, cause: str) -> str:
    real = [u for u in store.find_users_by_name(name) if not u.placeholder]
    return real[0].id if len(real) == 1 else store.create_user(name, cause=cause).id
