"""Who said an utterance, when several people may be present: voice evidence per turn.

The identity poll decides one current user from the last seconds of camera and
microphone (debounced over polls), which is right for the Level-1 chunk but not for a
conversation between two people at the table: their turns alternate faster than the
poll settles, and the camera's primary face is often the listener's. So each finished
user turn is also matched by its own voice against the enrolled voice keys.

The decision is conservative, because a wrong attribution writes one person's facts onto
another: the turn goes to another enrolled person only when the presumed speaker (the
session's current user) has a voice key to compare with and does not clear the threshold
for the turn's length, and the other person's s-normed score clears it by `margin`.

A presumed speaker with no voice key keeps every turn. Such a user was met by face, and
their voice was refused a key because it already scored as someone else's (or they have not
spoken long enough yet): the voice cannot tell them from that person, so a match to that
person is no evidence against them. Moving their turns wrote one person's visit onto
another's user: `bench memorize` (one LibriSpeech speaker's visit onto another's user, every
poll of the visit NEW by face) and `bench conversation` (test scenario 1: four of Sophie's
ten day-1 turns onto Chloe's user, Sophie in view and recognised by face all along, her
voice scoring as Chloe's). Requiring instead that the voice alone make the other person
KNOWN (the poll's cost-derived LLR bar) did not stop the second and kept a clear voice from
its owner: with two people on camera, Anna's s-normed 11.4 against Ben's 2.0 (under the
threshold) stayed Ben's (tests/runtime/test_several_people.py). Voice moves are for someone
speaking beside a user whose own voice is known.

A turn long enough to judge (`min_speech_s`) whose voice is clearly not the presumed
speaker's (their score under the threshold by `margin`) and not clearly anyone else's is an
unknown speaker's: it is kept out of the presumed speaker's memory rather than guessed onto
them. Everything else keeps the presumed speaker ("no evidence against them"), as a
single-person session always did.
Unknown voices are not enrolled here: enrolment stays with the poll, which sees the face.

A move is also checked against the camera: when faces are in view and the other person has a face
key, one of those faces must be theirs (calibrated face LLR >= 0), or the turn is kept out of
memory ("voice's owner not in view"). A voice alone cannot be trusted to name someone absent: in
`bench realtime` (8e299b6) LibriSpeech speaker 2609's turn scored s-normed 9.97 against speaker
3005's key (0.91 against the presumed speaker's), far past any voice bar, while 2609's face was the
one in view; the turn went onto 3005's memory. Anna's turns beside Ben (both on camera) still move.

Voices told apart inside one turn (`attribute_voices`): in one room, through one microphone, every
voice scores far above the threshold against whoever was enrolled first (measured on the real
recordings of `bench real`: s-normed 13-17 against a threshold of 2.95 for six different people),
so absolute scores cannot tell the people at the table apart. The turn splitter can: it clusters the
turn's own windows and labels voices it found apart. Those are different people, so the presumed
speaker keeps at most one of them (the voice closest to their keys); each other voice goes to another
enrolled person only on the usual clear evidence, and is otherwise an unknown speaker's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from egomem.identity.identifier import FacesInView, PersonIdentifier

# The reasons that keep a turn out of everyone's memory (heard, shown in the timeline, not remembered).
UNKNOWN_VOICE_REASON = "unknown voice"
ANOTHER_VOICE_IN_TURN = "another voice in the turn"
OWNER_NOT_IN_VIEW = "voice's owner not in view"
# Not the voice's call: what was said gives two people's own names, so the turn holds two speakers.
SEVERAL_PEOPLE_NAMED = "several people named themselves in the turn"
KEPT_OUT_REASONS = frozenset({UNKNOWN_VOICE_REASON, ANOTHER_VOICE_IN_TURN, OWNER_NOT_IN_VIEW, SEVERAL_PEOPLE_NAMED})


@dataclass(frozen=True)
class TurnSpeaker:
    user_id: str | None  # who said it; None: nobody is presumed and no enrolled voice matched
    score: float | None  # the winning s-normed voice score (None: no voice evidence)
    # why: "voice" (matched another person), "unknown voice" (clearly not the presumed speaker,
    # not clearly anyone else; user_id None), "voice's owner not in view" (clearly another person's voice,
    # but the faces in view say that person is not there; user_id None), "presumed" (kept), "presumed has
    # no voice key" (kept: nothing to compare with), "no speech", "no voice keys"
    reason: str
    presumed_score: float | None = None  # the presumed speaker's s-normed score (None: not scored)


class TurnAttributor:
    def __init__(
        self,
        identifier: PersonIdentifier,
        *,
        margin: float = 1.0,
        min_speech_s: float = 1.6,
        frames: Callable[[], Sequence[np.ndarray]] | None = None,
    ) -> None:
        self.identifier = identifier
        self.margin = margin
        self.frames = frames  # the camera's latest frames (None: no camera): who is in view now
        # Under resemblyzer's 1.6 s window a voice is tiled to fill it and scores lower against
        # its own keys (docs/benchmarks/speaker.md): too weak to say "not this person".
        self.min_speech_s = min_speech_s

    def attribute(self, audio: np.ndarray | None, presumed: str | None, view: FacesInView | None = None) -> TurnSpeaker:
        """Who said `audio`, given the presumed speaker; `view`: the faces in view now, shared by the
        questions of one moment (None: looked for here, if needed)."""
        voice = self.identifier.voice_encoder.observe(audio) if audio is not None and audio.size else None
        if voice is None:
            return TurnSpeaker(presumed, None, "no speech")
        matches = self.identifier.voice_scores(voice.vector, speech_s=voice.speech_s)
        if not matches:
            return TurnSpeaker(presumed, None, "no voice keys")
        thr = self.identifier.voice_threshold(voice.speech_s)
        best = matches[0]
        presumed_score = next((m.value for m in matches if m.user_id == presumed), None)
        if presumed is not None and presumed_score is None and not self.identifier.has_voice_key(presumed):
            return TurnSpeaker(presumed, None, "presumed has no voice key")
        presumed_speaks = presumed_score is not None and presumed_score >= thr
        clearly_best = best.value >= thr + self.margin
        if best.user_id != presumed and clearly_best and not presumed_speaks:
            if self._not_in_view(best.user_id, view or self._view()):
                return TurnSpeaker(None, best.value, OWNER_NOT_IN_VIEW, presumed_score)
            return TurnSpeaker(best.user_id, best.value, "voice", presumed_score)
        clearly_not = presumed_score is not None and presumed_score < thr - self.margin
        if clearly_not and voice.speech_s >= self.min_speech_s:
            return TurnSpeaker(None, presumed_score, UNKNOWN_VOICE_REASON, presumed_score)
        return TurnSpeaker(presumed, presumed_score, "presumed", presumed_score)

    def _view(self) -> FacesInView | None:
        """The faces of the camera's latest frames, looked for on the first question (None: no camera)."""
        frames = self.frames
        return None if frames is None else FacesInView(lambda: self.identifier.faces_in(frames()))

    def _not_in_view(self, user_id: str, view: FacesInView | None) -> bool:
        """Whether the faces in view say `user_id` is not there (their best calibrated face LLR is
        against them); False without a camera, a face in view, or a face key of theirs."""
        if view is None:
            return False
        llr = self.identifier.face_llr_in_view(user_id, view)
        return llr is not None and llr < 0.0

    def attribute_voices(self, voices: list[np.ndarray], presumed: str | None) -> list[TurnSpeaker]:
        """Speakers of the voices of one turn that the turn splitter told apart (their audio each),
        in order: being different people, no person gets two of them; each person keeps the voice
        closest to their keys, and the others are unknown (see the module docstring)."""
        view = self._view()  # one moment: its faces are found once for every voice
        found = [self.attribute(v, presumed, view) for v in voices]

        def closeness(i: int) -> tuple[float, int]:  # without a score (no voice keys): the longest voice
            score = found[i].score
            return (score if score is not None else float("-inf"), voices[i].size)

        keep: dict[str, int] = {}
        for i, f in enumerate(found):
            if f.user_id is not None and (f.user_id not in keep or closeness(i) > closeness(keep[f.user_id])):
                keep[f.user_id] = i
        return [
            f
            if f.user_id is None or keep[f.user_id] == i
            else TurnSpeaker(None, f.score, ANOTHER_VOICE_IN_TURN, f.presumed_score)
            for i, f in enumerate(found)
        ]
