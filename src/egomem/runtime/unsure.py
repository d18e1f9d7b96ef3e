"""Memory held back while identity is unsure who is speaking.

When identity stays UNSURE about the person in view (fused face+voice evidence between the best
candidate and someone new), the poll makes them current under an unsure id (identity.consent_gate):
their Level 1 shows nobody's memory, the dialog asks who they are, and their sessions go to memory
as UNSURE (`identification`): the memory manager writes a session to the candidate only when the
speaker says the candidate's name, and otherwise stores it as a held episode (transcripts only,
nothing on anyone's profile). The person is then settled:
- by a name (`named`: said in a turn, or found in a held session): the candidate's name means the
  candidate; any other name means someone new, enrolled with the face and voice seen so far;
- by later polls that confirm the candidate from the same observations (`ConsentGate.confirmed`);
- by polls that say NEW (someone nobody knows: enrolled as new).
Held sessions of a settled person are handed over again for them (`due` -> release); those of a
person never settled are dropped, with a record in the episode, `hold_s` after they were held, when
the person is gone (end of the day's visitor keys, a refusal) or at the end of the stream.
Why not write to the candidate and repair later: a merge shows one person's life to another at
once; holding costs only a delay, or memory of a visit when nobody could tell who it was.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from egomem.errors import EgomemError
from egomem.identity.consent_gate import ConsentGate
from egomem.identity.types import Identification, IdentityStatus
from egomem.memory.manager import SessionOutcome
from egomem.memory.social import same_name
from egomem.retrieval.process import RetrievalProcess
from egomem.runtime.conversation_log import ConversationLog
from egomem.runtime.timeline import Timeline
from egomem.store.base import MemoryStore


@dataclass(frozen=True)
class Due:
    """What to do now with held sessions: hand each over again for its person, or drop it."""

    release: list[tuple[str, str]]  # (episode id, user id)
    drop: list[tuple[str, str]]  # (episode id, why)


class UnsureMemory:
    def __init__(
        self,
        gate: ConsentGate | None,
        store: MemoryStore,
        retrieval: RetrievalProcess,
        timeline: Timeline,
        *,
        hold_s: float,
        log: ConversationLog | None = None,
    ) -> None:
        self.gate, self.store, self.retrieval, self.timeline, self.hold_s = gate, store, retrieval, timeline, hold_s
        self.log = log  # the presence log, rewritten when a person denies being who they were taken for
        self._last: Identification | None = None  # the latest poll's identification
        self._lock = threading.Lock()
        self._held: dict[str, list[tuple[str, float]]] = {}  # unsure id -> (episode id, held at: stream s)

    def identification(self, person: str | None) -> Identification | None:
        """How a session of `person` (a Level-1 id) goes to memory: KNOWN for a user, UNSURE (the
        candidate, the latest observations) for an unsure person not settled yet, None for nobody."""
        if person is None:
            return None
        if self.gate is not None:
            person = self.gate.resolve(person)
            if self.gate.is_unsure(person):
                return self.gate.observed_as(person or "")
        return Identification(IdentityStatus.KNOWN, user_id=person)

    def observed(self, identification: Identification) -> None:
        """The latest poll's identification (the face and voice a denial is about)."""
        with self._lock:
            self._last = identification

    def denied(self, user: str, at: float, name: str | None = None) -> str | None:
        """The person current as `user` said they are not ("I'm not Alex", or another name than
        `user`'s): from the latest poll's face and voice they are an unsure person whom `user`'s polls
        do not settle, the polls since `user` became current are theirs (so is the session in progress),
        and a name said settles them as someone new. Returns their id now (None: nothing observed)."""
        with self._lock:
            last = self._last
        if self.gate is None or last is None or (last.face is None and last.voice is None):
            return None
        person = self.gate.hold_denied(last, user)
        if self.log is not None:
            self.log.reassign_tail(user, person)
        self.timeline.add(at, "identity", user=person, text=f"said they are not {user}: held as unsure")
        self.retrieval.settled(user, person)  # Level 1 now shares no one's memory
        return (self.named(person, name, at) if name else None) or person

    def is_unsure(self, person: str | None) -> bool:
        return self.gate is not None and self.gate.is_unsure(person)

    def after(self, person: str | None, ident: Identification | None, outcome: SessionOutcome, at: float) -> None:
        """A session of `person` handed to memory as `ident` was written as `outcome` (`at`: stream seconds)."""
        if person is None or ident is None or ident.status != IdentityStatus.UNSURE or self.gate is None:
            return
        if outcome.held:
            with self._lock:
                self._held.setdefault(person, []).append((outcome.episode_id, at))
            self.timeline.add(at, "memory", op="HELD", user=None, text="; ".join(outcome.notes))
            if outcome.held_name:
                self.named(person, outcome.held_name, at)
        elif outcome.ok and outcome.user_id:  # the candidate's own name: it was the candidate
            self._settle(person, self.gate.resolve_unsure(person, outcome.user_id), at, "said the candidate's name")

    def named(self, person: str, name: str, at: float) -> str | None:
        """The unsure `person` said `name`: the candidate when it is the candidate's name, else someone
        new (enrolled with what was seen and heard of them). Returns who they are now (None: not unsure)."""
        if self.gate is None or not self.gate.is_unsure(person):
            return None
        candidate = self.gate.candidate_of(person)
        try:
            known = None if candidate is None else self.store.get_user(candidate).name
        except EgomemError:
            known = None
        user = candidate if known is not None and same_name(known, name) else None
        try:
            now = self.gate.resolve_unsure(person, user, name)
        except EgomemError as exc:
            self.timeline.add(at, "warning", text=f"could not enrol the person who said {name}: {exc}")
            return None
        why = f"said the name {name}" + (" (the candidate's)" if user else f" ({known or 'unnamed'} expected)")
        self._settle(person, now, at, why)
        return now

    def _settle(self, person: str, now: str, at: float, why: str) -> None:
        self.timeline.add(at, "identity", user=now, text=f"unsure person settled: {why}")
        self.retrieval.settled(person, now)

    def due(self, now: float, *, final: bool = False) -> Due:
        """Held sessions to hand over again (their person was settled as a user) or to drop (never
        settled: gone, past `hold_s`, or the stream ended with `final`); taken out of the register."""
        release: list[tuple[str, str]] = []
        drop: list[tuple[str, str]] = []
        if self.gate is None:
            return Due(release, drop)
        with self._lock:
            for person in list(self._held):
                user = self.gate.resolve(person) or person
                settled = not self.gate.is_unsure(user) and not self.gate.is_pending(user) and user != person
                keep: list[tuple[str, float]] = []
                for episode, held_at in self._held[person]:
                    if settled:
                        release.append((episode, user))
                    elif final or self.gate.unsure_gone(person) or now - held_at > self.hold_s:
                        why = "the stream ended" if final else "the person left unidentified"
                        drop.append((episode, f"identity never settled ({why})"))
                    else:
                        keep.append((episode, held_at))
                if keep:
                    self._held[person] = keep
                else:
                    del self._held[person]
        return Due(release, drop)

    def held(self) -> int:
        with self._lock:
            return sum(len(v) for v in self._held.values())
