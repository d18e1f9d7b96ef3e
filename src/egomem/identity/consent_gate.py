"""The enrolment gate of the consent policy: where a new person's keys wait for their answer.

Under `ask` a person matched by nobody is not enrolled: their face and voice observations stay
in this process's memory under a pending id (`pending_...`, never a user row, never written to
the store or a log) until they agree (`consent`: enrolled then, with the keys seen so far) or
refuse (`refuse`: nothing is enrolled; the observations are kept in memory only so that the same
visitor is not asked again in this visit, and `end_of_day` drops them). A person who asked to be
forgotten is held the same way (`hold_back`), so the next poll does not enrol them again.

Under `notice` and `implicit` the gate enrols at once, as before.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass, field

import numpy as np

from egomem.identity.identifier import AGGREGATE_MIN_COS, PersonIdentifier
from egomem.identity.types import FaceObservation, Identification, VoiceObservation
from egomem.privacy.consent import ConsentPolicy

PENDING_PREFIX = "pending_"


@dataclass
class _Visitor:
    """A person not enrolled: what identifies them, in memory only."""

    id: str
    faces: list[FaceObservation] = field(default_factory=list)
    voices: list[VoiceObservation] = field(default_factory=list)
    held_back: bool = False  # refused, deferred, or forgotten: never enrolled in this visit


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
        face, voice = identification.face, identification.voice
        with self._lock:
            known = self._match(face, voice)
            if known is not None:
                self._remember(known, face, voice)
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
            self._remember(visitor, identification.face, identification.voice)
            self._visitors[visitor.id] = visitor
            return visitor.id

    def held_back(self, person: str | None) -> bool:
        visitor = self._visitors.get(person or "")
        return visitor is not None and visitor.held_back

    def end_of_day(self) -> int:
        """Drop every visitor's in-memory observations (retention: visitors are forgotten each day)."""
        with self._lock:
            n = len(self._visitors)
            self._visitors.clear()
            return n

    # -- matching in memory --------------------------------------------------------------
    def _match(self, face: FaceObservation | None, voice: VoiceObservation | None) -> _Visitor | None:
        """The visitor these observations are, by the same rules as enrolled people: a face within the
        face threshold, or a voice as close as two polls the identifier takes to be one voice."""
        threshold = self.identifier.config.face.threshold
        for visitor in self._visitors.values():
            if face is not None and any(_l2(face.vector, f.vector) < threshold for f in visitor.faces):
                return visitor
            if voice is not None and any(_cos(voice.vector, v.vector) > AGGREGATE_MIN_COS for v in visitor.voices):
                return visitor
        return None

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
