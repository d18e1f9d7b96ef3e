"""The enrolment gate of the consent policy: where a new person's keys wait for their answer.

Under `ask` a person matched by nobody is not enrolled: their face and voice observations stay
in this process's memory under a pending id (`pending_...`, never a user row, never written to
the store or a log) until they agree (`consent`: enrolled then, with the keys seen so far) or
refuse (`refuse`: nothing is enrolled; the observations are kept in memory only so that the same
visitor is not asked again in this visit, and `end_of_day` drops them). A person who asked to be
forgotten is held the same way (`hold_back`), so the next poll does not enrol them again.

Under `notice` and `implicit` the gate enrols at once, as before.

A person identity is UNSURE about (fused evidence between the best candidate and someone new,
identity/calibration.py) is held the same way under an unsure id (`unsure_...`, `hold_unsure`):
never enrolled and never written as the candidate, while the memory of their sessions is held
back (runtime/unsure.py). `resolve_unsure` settles who they were: the candidate (later polls,
the candidate's name), or a new person (another name, polls that say NEW), enrolled with the
keys seen so far (under `ask`, a new person becomes a consent visitor first).
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass, field

import numpy as np

from egomem.identity.identifier import AGGREGATE_MIN_COS, PersonIdentifier
from egomem.identity.types import FaceObservation, Identification, IdentityStatus, VoiceObservation, linked_keys
from egomem.privacy.consent import ConsentPolicy

PENDING_PREFIX = "pending_"
UNSURE_PREFIX = "unsure_"


def is_unsure_id(person: str | None) -> bool:
    """An id the gate gave a person identity is unsure about (`hold_unsure`)."""
    return person is not None and person.startswith(UNSURE_PREFIX)


@dataclass
class _Visitor:
    """A person not enrolled: what identifies them, in memory only."""

    id: str
    faces: list[FaceObservation] = field(default_factory=list)
    voices: list[VoiceObservation] = field(default_factory=list)
    held_back: bool = False  # refused, deferred, or forgotten: never enrolled in this visit
    candidate: str | None = None  # an unsure person: the enrolled user they may be
    llrs: list[float] = field(default_factory=list)  # their polls' fused LLR for the candidate, this visit
    denied: bool = False  # they said they are not the candidate: only a name or NEW settles them


class ConsentGate:
    """The retrieval tracker's Enroller under a consent policy (implements retrieval.polling.Enroller)."""

    def __init__(self, identifier: PersonIdentifier, policy: ConsentPolicy) -> None:
        self.identifier = identifier
        self.policy = policy
        self._visitors: dict[str, _Visitor] = {}
        self._enrolled: dict[str, str] = {}  # pending id -> user id, once they agreed
        self.enrolled_now: set[str] = set()  # users enrolled at once under `notice` (told once)
        self._lock = threading.Lock()

    # -- the Enroller ------------------------------------------------------------------
    def enroll_new(self, identification: Identification) -> str:
        face, voice = linked_keys(identification.face, identification.voice)
        with self._lock:
            known = self._match(face, voice)
            if known is not None:
                self._remember(known, face, voice)
                if self.is_unsure(known.id):  # the unsure person now matches nobody: someone new
                    return self._new_person(known, None)
                return self._enrolled.get(known.id, known.id)
            if self.policy != ConsentPolicy.ASK:
                uid = self.identifier.enroll(None, face, voice, condition="first meeting")
                if self.policy == ConsentPolicy.NOTICE:
                    self.enrolled_now.add(uid)
                return uid
            visitor = _Visitor(f"{PENDING_PREFIX}{uuid.uuid4().hex[:12]}")
            self._remember(visitor, face, voice)
            self._visitors[visitor.id] = visitor
            return visitor.id

    # -- unsure people (retrieval.polling.UnsureHolder) ---------------------------------------
    def hold_unsure(self, identification: Identification) -> str:
        """Identity stays UNSURE about the person in view: their id while it does (one unsure id for one
        person's observations; a visitor being asked for consent keeps their pending id)."""
        face, voice = linked_keys(identification.face, identification.voice)
        with self._lock:
            known = self._match(face, voice, settled=True)
            if known is None:
                best = identification.user_id or next((u for u, _ in identification.candidates), None)
                known = _Visitor(f"{UNSURE_PREFIX}{uuid.uuid4().hex[:12]}", candidate=best)
                self._visitors[known.id] = known
            self._remember(known, face, voice)
            if identification.llr is not None and known.candidate is not None:
                best = next((u for u, _ in identification.candidates), identification.user_id)
                if best == known.candidate:
                    known.llrs.append(identification.llr)
            return self._enrolled.get(known.id, known.id)

    def hold_denied(self, identification: Identification, user: str) -> str:
        """The person taken for `user` said they are not (`identification`: the latest poll): an unsure
        id with `user` as candidate, which later polls for `user` do not settle (`confirmed`)."""
        with self._lock:
            visitor = _Visitor(f"{UNSURE_PREFIX}{uuid.uuid4().hex[:12]}", candidate=user, denied=True)
            self._remember(visitor, *linked_keys(identification.face, identification.voice))
            self._visitors[visitor.id] = visitor
            return visitor.id

    def confirmed(self, person: str, user: str, identification: Identification) -> bool | None:
        """Polls say `user` (KNOWN) while the unsure `person` is current. True: it was them (settled as
        `user`, their memory released to them). False: someone else came in (`person` stays unsure).
        None: the same person, but the visit's evidence is not enough yet: their polls' mean fused LLR
        for `user` (the unsure polls too) is below KNOWN's threshold, so they stay unsure. Why the mean:
        the same face and voice seen again are not new evidence each time, and a person who looked
        unsure for most of a visit is not made someone else by the last two polls."""
        with self._lock:
            visitor = self._visitors.get(person)
            if visitor is None or not self.is_unsure(person) or visitor.candidate != user:
                return False
            if not self._same(visitor, identification.face, identification.voice):
                return False
            if visitor.denied:  # "I'm not Alex": Alex's polls do not overrule the person
                return None
            if identification.llr is not None:
                visitor.llrs.append(identification.llr)
            known_llr = self.identifier.thresholds[0]
            if visitor.llrs and sum(visitor.llrs) / len(visitor.llrs) < known_llr:
                return None
            self._enrolled[person] = user
            return True

    def resolve_unsure(self, person: str, user: str | None, name: str | None = None) -> str:
        """Settle who the unsure `person` is: `user` (an enrolled user), or with None a new person
        (named `name` when one was said), enrolled with what was seen and heard of them. Returns the
        id they have now: a user id, or under `ask` a consent visitor's pending id."""
        with self._lock:
            visitor = self._visitors.get(person)
            if visitor is None or not self.is_unsure(person):
                return self._enrolled.get(person, person)
            if visitor.held_back:  # asked to be forgotten: settled as nobody
                return person
            if user is not None:
                self._enrolled[person] = user
                return user
            return self._new_person(visitor, name)

    def is_unsure(self, person: str | None) -> bool:
        """An unsure person not settled yet: their memory is held back, never written to anyone."""
        return person is not None and person.startswith(UNSURE_PREFIX) and person not in self._enrolled

    def unsure_gone(self, person: str) -> bool:
        """The unsure `person` will never be settled: dropped (end of day), refused, or become a consent visitor."""
        if person in self._enrolled:
            return False
        visitor = self._visitors.get(person)
        return visitor is None or visitor.held_back

    def candidate_of(self, person: str) -> str | None:
        visitor = self._visitors.get(person)
        return None if visitor is None else visitor.candidate

    def observed_as(self, person: str) -> Identification:
        """The unsure person's latest observations, as evidence for the held memory (UNSURE, the candidate)."""
        visitor = self._visitors.get(person)
        if visitor is None:
            return Identification(IdentityStatus.UNSURE)
        return Identification(
            IdentityStatus.UNSURE,
            user_id=visitor.candidate,
            face=visitor.faces[-1] if visitor.faces else None,
            voice=visitor.voices[-1] if visitor.voices else None,
            rule="unsure: held back",
        )

    def _new_person(self, visitor: _Visitor, name: str | None) -> str:
        """An unsure visitor who is someone new (the lock held): enrolled under `implicit` / `notice`;
        under `ask` a consent visitor under a new pending id (the question follows), the unsure id dropped."""
        if visitor.held_back:
            return visitor.id
        if self.policy == ConsentPolicy.ASK:
            fresh = _Visitor(f"{PENDING_PREFIX}{uuid.uuid4().hex[:12]}", visitor.faces, visitor.voices)
            self._visitors[fresh.id] = fresh
            del self._visitors[visitor.id]
            return fresh.id
        face = visitor.faces[-1] if visitor.faces else None
        voice = visitor.voices[-1] if visitor.voices else None
        uid = self.identifier.enroll(None, face, voice, condition="unsure, then someone new", name=name)
        if self.policy == ConsentPolicy.NOTICE:
            self.enrolled_now.add(uid)
        self._enrolled[visitor.id] = uid
        return uid

    # -- decisions ---------------------------------------------------------------------
    def is_pending(self, person: str | None) -> bool:
        """A person in memory only (asked, or not yet asked, or refused): nothing of them may be stored."""
        return person is not None and person.startswith(PENDING_PREFIX) and person not in self._enrolled

    def resolve(self, person: str | None) -> str | None:
        """The user id a pending id became after consent; the id itself otherwise."""
        return None if person is None else self._enrolled.get(person, person)

    def consent(self, person: str) -> str:
        """The person agreed: enrol them with what was seen and heard of them. Returns their user id."""
        with self._lock:
            if person in self._enrolled:
                return self._enrolled[person]
            visitor = self._visitors.pop(person)
            faces: list[FaceObservation | None] = list(visitor.faces[-1:]) or [None]
            voices: list[VoiceObservation | None] = list(visitor.voices[-1:]) or [None]
            uid = self.identifier.enroll(None, faces[0], voices[0], condition="consented")
            self._enrolled[person] = uid
            return uid

    def refuse(self, person: str) -> None:
        """A refusal or "later": nothing is enrolled; the visitor stays recognisable in memory for this visit."""
        with self._lock:
            if person in self._visitors:
                self._visitors[person].held_back = True

    def hold_back(self, identification: Identification) -> str:
        """After "forget me": the observations that were this person's, held in memory only so that the
        next poll does not enrol them again; returns the pending id they now have."""
        with self._lock:
            visitor = _Visitor(f"{PENDING_PREFIX}{uuid.uuid4().hex[:12]}", held_back=True)
            self._remember(visitor, *linked_keys(identification.face, identification.voice))
            self._visitors[visitor.id] = visitor
            return visitor.id

    def held_back(self, person: str | None) -> bool:
        visitor = self._visitors.get(person or "")
        return visitor is not None and visitor.held_back

    def drop_visitor_keys(self) -> int:
        """Retention's name for `end_of_day` (memory.sleep_time.VisitorKeys)."""
        return self.end_of_day()

    def end_of_day(self) -> int:
        """Drop every visitor's in-memory observations (retention: visitors are forgotten each day)."""
        with self._lock:
            n = len(self._visitors)
            self._visitors.clear()
            return n

    # -- matching in memory --------------------------------------------------------------
    def _match(
        self, face: FaceObservation | None, voice: VoiceObservation | None, *, settled: bool = False
    ) -> _Visitor | None:
        """The visitor these observations are, by the same rules as enrolled people: a face within the
        face threshold, or a voice as close as two polls the identifier takes to be one voice. With
        `settled`, an unsure person settled in this visit too (they keep who they were settled as while
        identity stays unsure; a NEW decision does not follow a settlement it contradicts)."""
        for visitor in self._visitors.values():
            if visitor.candidate is not None:
                # An unsure person is matched strictly (a loose match would give one person's held
                # memory to another); once settled, only while still unsure (`settled`).
                if (settled or self.is_unsure(visitor.id)) and self._same(visitor, face, voice):
                    return visitor
                continue
            if self._face_near(visitor, face) or self._voice_near(visitor, voice):
                return visitor
        return None

    def _same(self, visitor: _Visitor, face: FaceObservation | None, voice: VoiceObservation | None) -> bool:
        """Stricter than `_match`: every modality observed in both matches the visitor's, and at least one does."""
        checks = []
        if face is not None and visitor.faces:
            checks.append(self._face_near(visitor, face))
        if voice is not None and visitor.voices:
            checks.append(self._voice_near(visitor, voice))
        return bool(checks) and all(checks)

    def _face_near(self, visitor: _Visitor, face: FaceObservation | None) -> bool:
        """Within the face threshold of one of the visitor's faces (as an enrolled person's face is matched)."""
        threshold = self.identifier.config.face.threshold
        return face is not None and any(_l2(face.vector, f.vector) < threshold for f in visitor.faces)

    @staticmethod
    def _voice_near(visitor: _Visitor, voice: VoiceObservation | None) -> bool:
        """As close to one of the visitor's voices as two polls the identifier takes to be one voice."""
        return voice is not None and any(_cos(voice.vector, v.vector) > AGGREGATE_MIN_COS for v in visitor.voices)

    @staticmethod
    def _remember(visitor: _Visitor, face: FaceObservation | None, voice: VoiceObservation | None) -> None:
        if face is not None:
            visitor.faces = [*visitor.faces[-3:], face]
        if voice is not None:
            visitor.voices = [*visitor.voices[-3:], voice]


def _l2(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(np.asarray(a, np.float32) - np.asarray(b, np.float32)))


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    x, y = np.asarray(a, np.float32).reshape(-1), np.asarray(b, np.float32).reshape(-1)
    return float(x @ y / ((np.linalg.norm(x) * np.linalg.norm(y)) or 1.0))
