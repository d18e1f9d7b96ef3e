"""Memorise a written conversation of several people: turns kept in episodes, and each
speaker's own words through the memory extractor and update agent.

Each session is stored first as one episode holding every speaker's turns
(`retrieval.conversations.store_conversation`: speakers as users, what `search` and `ask`
read). Then, per session and per speaker, the speaker's turns are the session's user
turns and the others' turns its context (speaker "other", not the robot), processed
with `MemoryManager.process(..., keep_episode=True)`: the speaker's facts, preferences and
relations are written, confirmed (+1) or superseded (-1) as in a live session, each linked
to the episode. LoCoMo's `bench locomo-qa` ingests through this.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from egomem.identity.types import Identification, IdentityStatus
from egomem.memory.items import SessionText, Turn
from egomem.memory.manager import MemoryManager, SessionOutcome
from egomem.retrieval.conversations import StoredSession, store_conversation
from egomem.retrieval.search import EpisodeTurn


@dataclass
class ConversationMemory:
    sessions: list[StoredSession]
    outcomes: list[SessionOutcome] = field(default_factory=list)  # one per (session, speaker) processed

    @property
    def failed(self) -> list[SessionOutcome]:
        return [o for o in self.outcomes if not o.ok]


def memorize_conversation(
    manager: MemoryManager,
    sessions: Sequence[tuple[float, Sequence[EpisodeTurn]]],
    *,
    cause: str,
    extract_sessions: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ConversationMemory:
    """Store every (start time, turns) session as an episode, then extract memory from the
    first `extract_sessions` of them (all when None; a slow extractor may be limited).
    A speaker's session that cannot be processed leaves the stored turns as they are."""
    stored = store_conversation(manager.store, sessions, cause=cause)
    out = ConversationMemory(stored)
    todo = list(zip(sessions, stored, strict=True))[: extract_sessions if extract_sessions is not None else None]
    for n, ((start, turns), s) in enumerate(todo):
        speakers = list(dict.fromkeys(t.speaker for t in turns if t.speaker))
        for speaker, user_id in zip(speakers, s.episode.participants, strict=False):
            session = SessionText(
                episode_id=s.episode.id,
                start=start,
                end=s.episode.end,
                date=_date(start),
                user_name=speaker,
                turns=[
                    Turn(speaker="user" if t.speaker == speaker else "other", text=t.text)
                    for t in turns
                    if t.text.strip()
                ],
            )
            known = Identification(status=IdentityStatus.KNOWN, user_id=user_id)
            out.outcomes.append(manager.process(session, known, keep_episode=True))
        if progress is not None:
            progress(n + 1, len(todo))
    return out


def _date(t: float) -> str:
    d = datetime.fromtimestamp(t, UTC)
    return f"{d.day} {d:%B %Y}"
