"""Who may erase whom: only a person verified by face and voice can erase themselves.

The decision takes what identity knows about the speaker of the request: who the turn's own
voice is (attribution), and who the latest poll saw and heard (face and voice fused). One
person can never erase another; anything short of both agreeing on the same enrolled person
is asked to confirm, never executed.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class EraseVerdict(StrEnum):
    ALLOW = "allow"
    CONFIRM = "confirm"  # identity unsure: ask the person to show their face and say it again
    REFUSE = "refuse"  # another person's voice asked for someone else's erasure


@dataclass(frozen=True)
class Speaker:
    """The identity evidence behind one request.

    `voice_user`: the person the turn's own voice was attributed to (None: the current user's voice,
    i.e. no one else's; "?": a voice nobody enrolled has). `face_user` / `face_voice_user`: the person
    the latest poll matched by face, and whether that poll's fused decision was KNOWN with both a face
    and a voice agreeing (`verified`)."""

    current: str | None
    voice_user: str | None
    face_user: str | None
    verified: bool


CONFIRM_LINE = "I want to be sure it's you before I delete anything: please look at me and say it again."
REFUSE_LINE = "I can only forget someone when they ask me themselves."


def may_erase(target: str | None, speaker: Speaker) -> EraseVerdict:
    """Whether `speaker` may erase `target` (the person to be forgotten: the speaker themselves)."""
    if target is None:
        return EraseVerdict.CONFIRM
    # The turn's voice belongs to a different enrolled person than the one to erase.
    if speaker.voice_user not in (None, "?") and speaker.voice_user != target:
        return EraseVerdict.REFUSE
    if speaker.voice_user == "?":
        return EraseVerdict.REFUSE if speaker.face_user == target else EraseVerdict.CONFIRM
    voice_is_target = speaker.voice_user == target or (speaker.voice_user is None and speaker.current == target)
    if voice_is_target and speaker.face_user == target and speaker.verified:
        return EraseVerdict.ALLOW
    return EraseVerdict.CONFIRM
