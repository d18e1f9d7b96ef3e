"""TurnAttributor's decision: another person only on clear voice evidence against the presumed one."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from egomem.identity.attribution import TurnAttributor
from egomem.identity.identifier import Match
from egomem.perception.types import VoiceObservation

THRESHOLD = 2.95


class _StubIdentifier:
    """Plumbing mock: fixed s-normed scores per user, the product's threshold."""

    def __init__(self, scores: dict[str, float], speech_s: float | None = 3.0) -> None:
        self.scores, self.speech_s = scores, speech_s
        self.voice_encoder = self

    def observe(self, audio: np.ndarray) -> VoiceObservation | None:
        return None if self.speech_s is None else VoiceObservation(np.ones(256, np.float32) / 16, self.speech_s)

    def voice_scores(self, vector: np.ndarray, **_: Any) -> list[Match]:
        return [Match(u, s, 0.5) for u, s in sorted(self.scores.items(), key=lambda kv: -kv[1])]

    def voice_threshold(self, speech_s: float) -> float:
        return THRESHOLD

    def has_voice_key(self, user_id: str) -> bool:
        return user_id in self.scores


def _who(scores: dict[str, float], presumed: str | None, speech_s: float | None = 3.0) -> tuple[str | None, str]:
    found = TurnAttributor(_StubIdentifier(scores, speech_s), margin=1.0).attribute(np.ones(16_000), presumed)
    return found.user_id, found.reason


@pytest.mark.parametrize(
    ("scores", "presumed", "expected"),
    [
        ({"ann": 6.0, "ben": 1.0}, "ann", ("ann", "presumed")),  # the presumed speaker's own voice
        ({"ann": 1.0, "ben": 6.0}, "ann", ("ben", "voice")),  # clearly the other one
        ({"ann": 2.5, "ben": 3.5}, "ann", ("ann", "presumed")),  # Ben over the threshold, not by the margin
        ({"ann": 1.0, "ben": 3.5}, "ann", (None, "unknown voice")),  # clearly not Ann, not clearly Ben
        ({"ann": 0.5, "ben": 1.0}, "ann", (None, "unknown voice")),  # a stranger beside Ann
        ({"ann": 1.0, "ben": 0.5}, "ann", (None, "unknown voice")),  # also when Ann is the least unlike
        ({"ann": 1.0, "ben": 4.5}, "ann", ("ben", "voice")),  # Ann's key says not her; Ben's clears it by the margin
        # Ann has no voice key (enrolled by face; her voice scored as Ben's, so it got none): nothing to
        # compare her with, so a voice like Ben's stays hers, however high it scores as his
        # (bench conversation: Sophie's turns went onto Chloe's user this way).
        ({"ben": 4.5}, "ann", ("ann", "presumed has no voice key")),
        ({"ben": 6.0}, "ann", ("ann", "presumed has no voice key")),
        ({"ann": 3.0, "ben": 6.0}, "ann", ("ann", "presumed")),  # the presumed one matches too: keep them
        ({"ben": 6.0}, None, ("ben", "voice")),  # nobody presumed, one clear voice
        ({"ann": 1.0, "ben": 2.0}, None, (None, "presumed")),  # an unknown voice stays unattributed
    ],
)
def test_attribution_needs_clear_evidence(
    scores: dict[str, float], presumed: str | None, expected: tuple[str | None, str]
) -> None:
    assert _who(scores, presumed) == expected


def test_a_short_turn_is_too_weak_to_say_it_is_not_the_presumed_speaker() -> None:
    assert _who({"ann": 0.5, "ben": 1.0}, "ann", speech_s=1.0) == ("ann", "presumed")


def test_no_speech_and_no_keys_keep_the_presumed_speaker() -> None:
    assert _who({"ben": 6.0}, "ann", speech_s=None) == ("ann", "no speech")
    assert _who({}, "ann") == ("ann", "no voice keys")


class _PerVoiceIdentifier(_StubIdentifier):
    """Plumbing mock: each voice's scores chosen by its audio's first sample (the voice's index)."""

    def __init__(self, per_voice: list[dict[str, float]]) -> None:
        super().__init__({})
        self.per_voice = per_voice

    def observe(self, audio: np.ndarray) -> VoiceObservation | None:
        self.scores = self.per_voice[int(audio[0])]
        return VoiceObservation(np.ones(256, np.float32) / 16, 3.0)


def _voices(per_voice: list[dict[str, float]], presumed: str | None) -> list[tuple[str | None, str]]:
    attributor = TurnAttributor(_PerVoiceIdentifier(per_voice), margin=1.0)
    voices = [np.full(16_000 * (i + 1), float(i)) for i in range(len(per_voice))]
    return [(f.user_id, f.reason) for f in attributor.attribute_voices(voices, presumed)]


def test_voices_of_one_turn_go_to_the_presumed_speaker_at_most_once() -> None:
    # One room, one microphone: three voices the splitter told apart all clear the threshold for A.
    found = _voices([{"A": 13.0}, {"A": 16.5}, {"A": 14.0}], "A")
    assert found == [
        (None, "another voice in the turn"),
        ("A", "presumed"),  # the voice closest to A's keys
        (None, "another voice in the turn"),
    ]


def test_voices_of_one_turn_keep_clear_evidence_for_another_person() -> None:
    # The second voice is clearly B (A's score under the threshold): it stays B's, A keeps the first.
    found = _voices([{"A": 9.0, "B": 1.0}, {"B": 9.0, "A": 0.5}], "A")
    assert found == [("A", "presumed"), ("B", "voice")]


def test_one_voice_is_decided_as_a_lone_turn_and_nobody_gets_two_voices() -> None:
    assert _voices([{"A": 13.0}], "A") == [("A", "presumed")]
    # Nobody presumed: both voices clearly match A, but two voices are two people.
    assert _voices([{"A": 13.0}, {"A": 14.0}], None) == [(None, "another voice in the turn"), ("A", "voice")]


class _WithFaces(_StubIdentifier):
    """Plumbing mock: fixed s-normed voice scores and, per user, the face LLR of the faces in view."""

    def __init__(self, scores: dict[str, float], face_llrs: dict[str, float | None]) -> None:
        super().__init__(scores)
        self.face_llrs = face_llrs
        self.asked: list[str] = []

    def face_llr_in_view(self, user_id: str, frames: Any) -> float | None:
        self.asked.append(user_id)
        return self.face_llrs.get(user_id)


@pytest.mark.parametrize(
    ("ben_face_llr", "expected"),
    [
        (-8.0, (None, "voice's owner not in view")),  # faces in view, none of them Ben: kept out of memory
        (12.0, ("ben", "voice")),  # Ben's face is in view: his voice moves the turn
        (None, ("ben", "voice")),  # no face in view (or Ben has no face key): the voice decides alone
    ],
)
def test_a_voice_moves_a_turn_only_to_someone_the_camera_does_not_rule_out(
    ben_face_llr: float | None, expected: tuple[str | None, str]
) -> None:
    ident = _WithFaces({"ann": 0.9, "ben": 10.0}, {"ben": ben_face_llr})
    attributor = TurnAttributor(ident, margin=1.0, frames=lambda: [np.zeros((4, 4, 3), np.uint8)])
    found = attributor.attribute(np.ones(16_000), "ann")
    assert (found.user_id, found.reason) == expected
    assert ident.asked == ["ben"]


def test_without_a_camera_the_faces_are_not_asked() -> None:
    ident = _WithFaces({"ann": 0.9, "ben": 10.0}, {"ben": -8.0})
    found = TurnAttributor(ident, margin=1.0).attribute(np.ones(16_000), "ann")
    assert (found.user_id, found.reason) == ("ben", "voice") and ident.asked == []


class _PerVoiceWithFaces(_PerVoiceIdentifier):
    """Plumbing mock: per-voice scores, a face LLR per user, and a count of face detections."""

    def __init__(self, per_voice: list[dict[str, float]], face_llrs: dict[str, float]) -> None:
        super().__init__(per_voice)
        self.face_llrs, self.detections = face_llrs, 0

    def faces_in(self, frames: Any) -> list[Any]:
        self.detections += 1
        return [object()]

    def face_llr_in_view(self, user_id: str, view: Any) -> float | None:
        view.faces()
        return self.face_llrs.get(user_id)


def test_the_faces_of_a_split_turn_are_found_once_for_all_its_voices() -> None:
    # Two voices of one turn, each clearly someone other than Ann: both moves ask the camera, one detection.
    ident = _PerVoiceWithFaces([{"ann": 0.5, "ben": 10.0}, {"ann": 0.5, "cara": 10.0}], {"ben": 5.0, "cara": -5.0})
    attributor = TurnAttributor(ident, margin=1.0, frames=lambda: [np.zeros((4, 4, 3), np.uint8)])
    voices = [np.full(16_000 * (i + 1), float(i)) for i in range(2)]
    found = [(f.user_id, f.reason) for f in attributor.attribute_voices(voices, "ann")]
    assert found == [("ben", "voice"), (None, "voice's owner not in view")]
    assert ident.detections == 1
