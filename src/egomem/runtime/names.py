"""A name said during a session ("I'm Anna"), learnt at once so the dialog knows it.

The dialog loop hands each heard turn here; the identity poller settles a name that waited for
its speaker to be identified. The name is written through memory (`MemoryManager.adopt_name`),
never by this module.
"""

from __future__ import annotations

import threading

from egomem.errors import EgomemError
from egomem.memory.denial import denies_identity
from egomem.memory.manager import MemoryManager
from egomem.memory.rules_extract import name_in, several_people_named
from egomem.memory.social import same_name
from egomem.retrieval.process import RetrievalProcess
from egomem.runtime.conversation_log import SOMEONE, ConversationLog
from egomem.runtime.timeline import Timeline
from egomem.runtime.unsure import UnsureMemory
from egomem.store.base import MemoryStore

# A name heard while the speaker is not yet identified waits this many polls for them.
NAME_WAIT_POLLS = 3


class NameLearner:
    def __init__(
        self,
        store: MemoryStore,
        manager: MemoryManager,
        retrieval: RetrievalProcess,
        timeline: Timeline,
        log: ConversationLog,
        *,
        poll_interval_s: float,
        unsure: UnsureMemory | None = None,
    ) -> None:
        self.store, self.manager, self.retrieval, self.timeline = store, manager, retrieval, timeline
        self.log = log  # each poll's sighting: who that poll alone saw (identity_poller.sighting)
        self.unsure = unsure  # a name from a person identity is unsure about settles who they are
        self.poll_interval_s = poll_interval_s
        self._lock = threading.Lock()
        self._pending: tuple[str, float, str | None] | None = None  # (name, heard at, Level-1 user then)

    def several_named(self, text: str) -> list[str]:
        """The different own names that sentences of one heard piece give (`several_people_named`):
        a piece holding two speakers, which no one's memory should take whole. Empty otherwise."""
        try:
            return several_people_named(text, self._known_names())
        except EgomemError:
            return []

    def _known_names(self) -> list[str]:
        return [u.name for u in self.store.list_users() if u.name]

    def heard(self, text: str, start: float, end: float, by_voice: str | None = None) -> None:
        """A user whose name memory lacks says it: write it now, not after the session, and
        refresh Level 1 so the dialog model knows it at once.

        Who said it must be certain, or a name lands on the wrong person. The Level-1 user
        is debounced, so just after a change of person it is still the previous one: the name
        goes to the current user only when the polls during the utterance saw that user itself
        (their sightings, not the debounced user); otherwise it waits for the next user to become
        current (a newly enrolled person, typically) within `NAME_WAIT_POLLS` polls, and is
        dropped after that (the session's extraction still finds it). A turn attributed by its
        own voice (`by_voice`) needs no poll: the name is that person's."""
        try:
            name = name_in(text, self._known_names())
        except EgomemError as exc:
            self.timeline.add(end, "warning", text=f"could not read a name: {exc}")
            return
        if by_voice is None and self._denial(text, end, name):
            return
        if name is None:
            return
        if by_voice is not None:
            self._adopt(by_voice, name, end)
            return
        user = self.retrieval.current_user()
        seen = [s for _, _, s in self.log.polls_between(start - self.poll_interval_s, end + 1e-3)]
        # An unsure person's polls before they are held (an UNSURE or NEW poll: someone not placed yet,
        # or nobody observable) count as theirs; once held, their polls are sighted as them.
        unsure = self.unsure is not None and self.unsure.is_unsure(user)
        if user is not None and seen and all(u == user or (unsure and u in (None, SOMEONE)) for u in seen):
            self._adopt(user, name, end)
        else:
            with self._lock:
                self._pending = (name, end, user)

    def _denial(self, text: str, t: float, name: str | None) -> bool:
        """The current user's turn says they are not who they were taken for ("I'm not Alex"): they are
        someone else from now on (named `name` when one was said too). Whether it was a denial."""
        current = self.retrieval.current_user()
        if self.unsure is None or current is None or self.unsure.is_unsure(current):
            return False
        if not denies_identity(text, self.name_of(current)):
            return False
        self.unsure.denied(current, t, name)
        return True

    def settle(self, t: float, current: str | None) -> None:
        """After a poll at stream time `t` found `current`: a waiting name goes to them once they
        are someone other than the user current when it was said."""
        with self._lock:
            pending = self._pending
            if pending is None:
                return
            if t - pending[1] > NAME_WAIT_POLLS * self.poll_interval_s:
                self._pending = None
                return
        if current is None or current == pending[2]:
            return  # still the previous user (or nobody): wait for the speaker to be identified
        with self._lock:
            self._pending = None
        self._adopt(current, pending[0], t)

    def name_of(self, user_id: str | None) -> str | None:
        if user_id is None:
            return None
        try:
            return self.store.get_user(user_id).name
        except EgomemError:
            return None

    def _adopt(self, user: str, name: str, t: float) -> None:
        if self.unsure is not None and self.unsure.is_unsure(user):
            self.unsure.named(user, name, t)  # the candidate's name, or someone new
            return
        known = self.name_of(user)
        if known is not None:
            if same_name(known, name):
                return
            # Identity evidence: someone taken for `known` gives another name. Not written onto them;
            # they are someone else from now on (memory decides the session's own turns the same way).
            if self.unsure is None or self.unsure.denied(user, t, name) is None:
                self.timeline.add(t, "warning", text=f"heard the name {name} from {known}: another person? not written")
            return
        try:
            done = self.manager.adopt_name(user, name, cause="name said during the session")
        except EgomemError as exc:
            self.timeline.add(t, "warning", text=f"could not record the name: {exc}")
            return
        self.timeline.add(t, "memory", op="NAME", user=user, text=f"{name} ({done})")
        self.retrieval.refresh_level1()
