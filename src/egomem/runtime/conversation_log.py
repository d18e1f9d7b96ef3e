"""What the three processes share: what was heard, what was said, and who was present when.

The dialog loop writes heard turns and the assistant's lines, the identity poller writes who
each poll found present, and the memory rounds read all three to cut and attribute sessions.
One lock guards the three lists; readers get copies.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

# The speaker of a turn whose voice is clearly not the current user's and not clearly anyone
# else's: the turn stays in the timeline but out of everyone's memory (identity/attribution.py).
UNKNOWN_VOICE = "?unknown-voice"
# The speaker of a turn the polls cannot vouch for: they saw someone during it, but not a user who was
# current then (the current user was the person who had just left, a newcomer not yet confirmed).
# Kept out of memory like an unknown voice: a lost turn is a split, a guessed one can be a merge.
UNSURE_SPEAKER = "?unsure-speaker"
# A poll's sighting of someone identity does not know (NEW or UNSURE), not enrolled at that poll.
SOMEONE = "?someone"


@dataclass(frozen=True)
class Heard:
    """A transcribed user turn; `speaker` by its voice: None = the session's user, UNKNOWN_VOICE =
    nobody's, else another enrolled person's id."""

    start: float
    end: float
    text: str
    speaker: str | None


class ConversationLog:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._heard: list[Heard] = []
        self._said: list[tuple[float, str]] = []  # the assistant's lines (stream time, text)
        # (poll time, current user, sighting): the current user is debounced (it switches a poll or two
        # after a person appears); the sighting is what that poll alone saw (IdentityPoller.poll).
        self._presence: list[tuple[float, str | None, str | None]] = []

    def heard(self, turn: Heard) -> None:
        with self._lock:
            self._heard.append(turn)

    def said(self, t: float, text: str) -> None:
        with self._lock:
            self._said.append((t, text))

    def present(self, t: float, user: str | None, seen: str | None = None) -> None:
        """A poll at `t`: the current (debounced) `user`, and who that poll alone `seen`: a user id,
        SOMEONE (a person identity does not know), or None (nobody observable, or not recorded)."""
        with self._lock:
            self._presence.append((t, user, seen))

    def reassign_tail(self, old: str, new: str) -> int:
        """The latest polls that found `old` (back to the last poll that found someone else or nobody)
        found `new`: identity was wrong about them (a denial). Returns how many polls changed."""
        with self._lock:
            n = 0
            for i in range(len(self._presence) - 1, -1, -1):
                t, user, seen = self._presence[i]
                if user != old:
                    break
                self._presence[i] = (t, new, new if seen == old else seen)
                n += 1
            return n

    def heard_turns(self, since: float = float("-inf")) -> list[Heard]:
        """Heard turns that started at or after `since`."""
        with self._lock:
            return [h for h in self._heard if h.start >= since]

    def heard_overlapping(self, start: float, end: float) -> list[Heard]:
        with self._lock:
            return [h for h in self._heard if h.start < end and h.end > start]

    def said_between(self, start: float, end: float) -> list[tuple[float, str]]:
        with self._lock:
            return [(t, x) for t, x in self._said if start <= t <= end]

    def present_between(self, start: float, end: float) -> list[tuple[float, str | None]]:
        with self._lock:
            return [(t, u) for t, u, _ in self._presence if start <= t <= end]

    def polls_between(self, start: float, end: float) -> list[tuple[float, str | None, str | None]]:
        """The polls in [start, end]: (time, current user, sighting)."""
        with self._lock:
            return [p for p in self._presence if start <= p[0] <= end]

    def present_during(self, start: float, end: float, lag_s: float) -> str | None:
        """Who was present during [start, end]: the user most polls saw, counting the polls up to
        `lag_s` after it too (identity is confirmed a couple of polls after a person appears)."""
        return majority([(u, start <= t <= end) for t, u in self.present_between(start, end + lag_s)])


def majority(polls: list[tuple[str | None, bool]]) -> str | None:
    """The user most polls saw (polls: user, whether the poll fell inside the session itself
    rather than in the lag after it). A tie goes to more polls inside the session, then to the
    later user (identity is debounced: the newest poll is the surest). Never to set or hash
    order: that differs between processes and made a replayed recording's memory differ."""
    score: dict[str, tuple[int, int, int]] = {}
    for i, (user, inside) in enumerate(polls):
        if user is not None:
            n, n_in, _ = score.get(user, (0, 0, 0))
            score[user] = (n + 1, n_in + int(inside), i)
    return max(score, key=lambda u: score[u]) if score else None
