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
