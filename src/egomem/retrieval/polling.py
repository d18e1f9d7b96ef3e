"""Level-1 polling: who is in front of the assistant, debounced.

Every poll asks the identity layer about the last τ seconds of audio and the latest
frames. One bad frame must not flip the user, so a different known user must win
`confirm_polls` polls in a row before the switch; with the default 2 the switch lands
one poll after the first clear observation, i.e. within the issue's 2 poll intervals.
A person nobody knows, seen or heard for `new_user_polls` polls in a row, becomes a
provisional user through the injected Enroller. `absent_polls` polls with nobody
observable clear the current user (a silent user looking away keeps it a while).
UNSURE (evidence between "the best candidate" and "someone new") is "not this user": it never
switches to the candidate nor enrols anyone. `confirm_polls` UNSURE polls in a row make the unsure
person current under an id of the injected UnsureHolder (their Level 1 holds no one's memory, and
their sessions are held back, runtime/unsure.py), or clear the current user without one; either
way what an unsure person says is not written to whoever was there before. When the candidate
then wins `confirm_polls` polls, the holder decides (`confirmed`): it was them, someone else came in
(both switch), or it is the same person with too little evidence over the visit (no switch).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from egomem.identity.types import Identification, IdentityStatus


class MediaWindow(Protocol):
    """What the poller reads from the stream buffer (the runtime adapts its buffer)."""

    def last_audio(self, seconds: float) -> np.ndarray | None:
        """The last `seconds` of the listening channel, 16 kHz mono float32, or None."""
        ...

    def latest_frames(self, n: int) -> Sequence[np.ndarray]:
        """Up to `n` most recent video frames, RGB uint8 HxWx3 (may be empty)."""
        ...


class Enroller(Protocol):
    """Creates a provisional user with the observation's face/voice keys; returns its id.
    The identity layer provides the real one."""

    def enroll_new(self, identification: Identification) -> str: ...


@runtime_checkable
class UnsureHolder(Protocol):
    """Holds people identity is unsure about (identity.consent_gate.ConsentGate)."""

    def hold_unsure(self, identification: Identification) -> str: ...

    def confirmed(self, person: str, user: str, identification: Identification) -> bool | None:
        """True: `person` was `user`; False: someone else came in; None: the same person, still unsure."""
        ...


@dataclass(frozen=True)
class PollPolicy:
    confirm_polls: int = 2
    new_user_polls: int = 2
    absent_polls: int = 5
    frames_per_poll: int = 3

    def __post_init__(self) -> None:
        if min(self.confirm_polls, self.new_user_polls, self.absent_polls, self.frames_per_poll) < 1:
            raise ValueError("poll policy counts must be >= 1")


class UserTracker:
    """The debounce state machine. `update` returns the new current user id when it
    changes (None meaning "nobody"), or the sentinel NO_CHANGE."""

    NO_CHANGE = "\x00no-change"

    def __init__(self, policy: PollPolicy, enroller: Enroller | None = None) -> None:
        self.policy = policy
        self.enroller = enroller
        self.holder = enroller if isinstance(enroller, UnsureHolder) else None
        self.current: str | None = None
        # Who the latest update's observation was taken for, before any debounce: the matched user,
        # the unsure person's held id, the user just enrolled for a newcomer; None: nobody it could place.
        self.seen_as: str | None = None
        self._pending: str | None = None
        self._pending_n = 0
        self._new_n = 0
        self._absent_n = 0
        self._unsure_n = 0

    def update(self, ident: Identification) -> str | None:
        self.seen_as = None
        if ident.status == IdentityStatus.KNOWN and ident.user_id:
            self.seen_as = ident.user_id
            self._new_n = self._absent_n = self._unsure_n = 0
            if ident.user_id == self.current:
                self._pending, self._pending_n = None, 0
                return self.NO_CHANGE
            if ident.user_id == self._pending:
                self._pending_n += 1
            else:
                self._pending, self._pending_n = ident.user_id, 1
            if self._pending_n >= self.policy.confirm_polls:
                if self._still_unsure(ident):
                    self.seen_as = self.current
                    return self.NO_CHANGE  # the unsure person, the visit's evidence not enough yet
                return self._switch(ident.user_id)
            return self.NO_CHANGE
        self._pending, self._pending_n = None, 0
        if ident.status == IdentityStatus.UNSURE:
            self._new_n = self._absent_n = 0
            self._unsure_n += 1
            if self._unsure_n >= self.policy.confirm_polls:
                if self.holder is not None:
                    self.seen_as = self.holder.hold_unsure(ident)
                    return self._switch(self.seen_as)
                if self.current is not None:
                    return self._switch(None)
            return self.NO_CHANGE
        self._unsure_n = 0
        if ident.status == IdentityStatus.NEW:
            self._absent_n = 0
            self._new_n += 1
            if self._new_n >= self.policy.new_user_polls and self.enroller is not None:
                self._new_n = 0
                self.seen_as = self.enroller.enroll_new(ident)
                return self._switch(self.seen_as)
            return self.NO_CHANGE
        self._new_n = 0
        self._absent_n += 1
        if self.current is not None and self._absent_n >= self.policy.absent_polls:
            return self._switch(None)
        return self.NO_CHANGE

    def _still_unsure(self, ident: Identification) -> bool:
        """KNOWN polls while an unsure person is current: whether the holder keeps them unsure."""
        if self.holder is None or self.current is None or ident.user_id is None:
            return False
        return self.holder.confirmed(self.current, ident.user_id, ident) is None

    def settled(self, person: str, user: str) -> bool:
        """The current (unsure) `person` was settled as `user`: they are current under that id now.
        Returns whether the current user changed."""
        if self.current != person or user == person:
            return False
        self.current = user
        return True

    def _switch(self, user_id: str | None) -> str | None:
        self._pending, self._pending_n = None, 0
        if user_id == self.current:
            return self.NO_CHANGE
        self.current = user_id
        return user_id
