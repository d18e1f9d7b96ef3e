"""The contract between perception, identity and retrieval.

Perception turns media into observations (egomem.perception.types, re-exported here);
the identity layer turns observations into an Identification; the retrieval process
consumes Identifications. Keep these types stable: several layers depend on them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

import numpy as np

from egomem.perception.types import FaceObservation, VoiceObservation

__all__ = [
    "FaceObservation",
    "Identification",
    "Identifier",
    "IdentityStatus",
    "VoiceObservation",
    "linked_keys",
]


class IdentityStatus(StrEnum):
    KNOWN = "known"  # matched an enrolled user
    # Evidence between "this is the best candidate" and "this is someone new" (identity/calibration.py):
    # not that user (nothing written to them, no switch to them), not enrolled as someone new either.
    UNSURE = "unsure"
    NEW = "new"  # a face or voice was observed but matches nobody
    UNKNOWN = "unknown"  # nothing usable observed (no face, no speech)


@dataclass
class Identification:
    status: IdentityStatus
    user_id: str | None = None
    face_distance: float | None = None  # L2 to the best key of user_id (lower is closer)
    voice_score: float | None = None  # s-normed (or cosine) score to user_id (higher is closer)
    face: FaceObservation | None = None
    voice: VoiceObservation | None = None
    # Candidates, best first: (user_id, posterior P(same person) in [0, 1] under config.identity.prior).
    candidates: list[tuple[str, float]] = field(default_factory=list)
    # Calibrated log-likelihood ratios (same vs different person) for the best candidate: per modality
    # (None: not observed, or the candidate has no key of it) and fused (their sum); `rule` names the
    # decision that fired, so every decision explains itself.
    face_llr: float | None = None
    voice_llr: float | None = None
    llr: float | None = None
    rule: str = ""


def linked_keys(
    face: FaceObservation | None, voice: VoiceObservation | None
) -> tuple[FaceObservation | None, VoiceObservation | None]:
    """The keys a new person may be enrolled with from one observation: a face and a voice go together
    only when they are linked, i.e. the face was the only one in view; with several faces in view the
    voice may be anyone's, so it is left out (a later poll that sees the person alone adds it: the
    identifier's cross-modal enrolment in `learn`). Face tracks linked to voices by lip activity
    (perception.people) would link them with several people in view; not used live (see docs)."""
    if face is not None and voice is not None and face.faces_in_view > 1:
        return face, None
    return face, voice


class Identifier(Protocol):
    """What the retrieval process calls every poll."""

    def identify(self, audio: np.ndarray | None, frames: Sequence[np.ndarray]) -> Identification:
        """`audio`: the last seconds of the listening channel, 16 kHz mono float32 (or None);
        `frames`: recent video frames, RGB uint8 HxWx3 (may be empty)."""
        ...
