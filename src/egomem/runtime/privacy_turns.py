"""The privacy side of the dialog: the consent question, its answer, withdrawal and "forget me".

`PrivacyTurns` sits beside the dialog model. The agent tells it when Level 1 changes person
(`on_person`: the consent question or the notice, once) and hands it each finished user turn
first (`on_turn`): a turn that answers the question, withdraws consent or asks to be forgotten is
handled here and answered with a line of ours (the dialog model does not answer it); any other
turn goes on to the dialog model as before. It also says whose sessions may be remembered
(`keeps_out`: anyone pending, refused or forgotten).

The rules are egomem.privacy's; the pending keys are identity.consent_gate's; the store
operations are the existing purge and the fact ops (docs/privacy.md).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from egomem.errors import EgomemError
from egomem.identity.consent_gate import ConsentGate
from egomem.identity.identifier import PersonIdentifier
from egomem.identity.types import Identification, IdentityStatus
from egomem.privacy.consent import WITHDRAWN, ConsentDialog, ConsentPolicy, ConsentState, is_withdrawal
from egomem.privacy.erase import CONFIRM_LINE, REFUSE_LINE, EraseVerdict, Speaker, may_erase
from egomem.privacy.forget import ForgetRequest, facts_about, read_forget_request
from egomem.schemas import ConsentEvent, DeletionReport
from egomem.store.base import MemoryStore

# What `on_turn` receives for a turn whose voice is nobody enrolled (the agent's UNKNOWN_VOICE).
UNKNOWN = "?"


@dataclass(frozen=True)
class Handled:
    """A turn handled here: `say` is our answer; `what` names the action for the timeline."""

    say: str
    what: str


class PrivacyTurns:
    def __init__(
        self,
        store: MemoryStore,
        gate: ConsentGate,
        identifier: PersonIdentifier,
        *,
        clock: Callable[[], float],
    ) -> None:
        self.store = store
        self.gate = gate
        self.identifier = identifier
        self.policy = gate.policy
        self.dialog = ConsentDialog(self.policy)
        self.clock = clock
        self._last: Identification | None = None  # the latest poll's decision (face and voice fused)
        self._forgotten: set[str] = set()
        self._lock = threading.Lock()

    # -- what the agent tells us -------------------------------------------------------------
    def observed(self, ident: Identification) -> None:
        """The latest poll's identification: who the face and the voice are, fused."""
        with self._lock:
            self._last = ident

    def on_person(self, person: str | None) -> str | None:
        """Level 1 changed to `person`: the line to say first (the consent question or the notice), or None."""
        if person is None:
            return None
        if self.gate.is_pending(person) and not self.gate.held_back(person):
            return self.dialog.greet(person)
        if self.policy == ConsentPolicy.NOTICE and person in self.gate.enrolled_now:
            line = self.dialog.greet(person)
            if line is not None:
                self._record(person, "notice", line)
            return line
        return None

    def keeps_out(self, person: str | None) -> bool:
        """Whether a session of `person` must stay out of memory: they are pending (not agreed yet),
        refused, or were forgotten during this run."""
        return person is not None and (self.gate.is_pending(person) or person in self._forgotten)

    def on_turn(self, text: str, current: str | None, voice_user: str | None) -> Handled | None:
        """A finished user turn. `current`: the Level-1 user; `voice_user`: the person its own voice was
        attributed to (None: the current user's voice, UNKNOWN: a voice nobody enrolled has)."""
        if self.gate.is_pending(current) and self.dialog.state(current or "") == ConsentState.ASKED:
            speaker = None if voice_user in (None, UNKNOWN) else voice_user
            decision = self.dialog.answer(current or "", speaker, text)
            if decision is not None:
                return self._decided(current or "", decision.event, decision.say or "", text)
        request = read_forget_request(text)
        if request is not None:
            return self._forget(request, current, voice_user)
        if is_withdrawal(text):
            return self._withdraw(text, current, voice_user)
        return None

    # -- consent -------------------------------------------------------------------------------
    def _decided(self, person: str, event: str | None, say: str, evidence: str) -> Handled:
        if event is None:
            return Handled(say, "consent answer from another person ignored")
        if event == "consent":
            uid = self.gate.consent(person)
            self._record(uid, "consent", evidence)
            return Handled(say, f"consent: enrolled {uid}")
        self.gate.refuse(person)
        self._record(None, event, evidence)  # nothing that could recognise them: no user, no keys
        return Handled(say, f"{event}: nothing kept")

    def _withdraw(self, text: str, current: str | None, voice_user: str | None) -> Handled:
        if self.gate.is_unsure(current):  # nobody settled: no keys to delete; hold them back
            self.gate.refuse(current or "")
            return Handled(WITHDRAWN, "withdrawal: unsure person, nothing stored")
        target = self.gate.resolve(current)
        verdict = may_erase(target, self._speaker(current, voice_user))
        if verdict != EraseVerdict.ALLOW or target is None:
            return Handled(REFUSE_LINE if verdict == EraseVerdict.REFUSE else CONFIRM_LINE, f"withdrawal {verdict}")
        with self.store.transaction():
            for key in self.store.list_keys(user_id=target):
                self.store.delete_key(int(key.id or 0), cause="consent withdrawn")
            self._record(target, "withdrawal", text)
        self.identifier.remove_user(target)
        self._hold_back()
        return Handled(WITHDRAWN, f"withdrawal: keys of {target} deleted")

    def _record(self, user_id: str | None, kind: str, evidence: str) -> None:
        event = ConsentEvent(user_id=user_id, kind=kind, policy=self.policy.value, at=self.clock(), evidence=evidence)
        try:
            self.store.record_consent(event)
        except EgomemError:
            # The person is gone (forgotten meanwhile): their decision has nobody to belong to.
            self.store.record_consent(event.model_copy(update={"user_id": None}))

    # -- forget me ------------------------------------------------------------------------------
    def _speaker(self, current: str | None, voice_user: str | None) -> Speaker:
        with self._lock:
            last = self._last
        face_user = None
        verified = False
        if last is not None and last.user_id is not None and last.face is not None:
            face_user = self.gate.resolve(last.user_id)
            # Verified: the fused decision is KNOWN and both the face and the voice speak for that person.
            verified = (
                last.status == IdentityStatus.KNOWN
                and last.voice is not None
                and (last.face_llr or 0.0) > 0.0
                and (last.voice_llr or 0.0) > 0.0
            )
        voice = UNKNOWN if voice_user == UNKNOWN else self.gate.resolve(voice_user)
        return Speaker(self.gate.resolve(current), voice, face_user, verified)

    def _forget(self, request: ForgetRequest, current: str | None, voice_user: str | None) -> Handled:
        if self.gate.is_pending(current) or self.gate.is_unsure(current):
            # Nothing of theirs was ever stored (an unsure person's held sessions are dropped at the next
            # round): drop what is held in memory, and keep them from being enrolled.
            self.gate.refuse(current or "")
            return Handled("I haven't kept anything about you, and I won't.", "forget: visitor, nothing stored")
        target = self.gate.resolve(voice_user) if voice_user not in (None, UNKNOWN) else self.gate.resolve(current)
        verdict = may_erase(target, self._speaker(current, voice_user))
        if target != self.gate.resolve(current) and voice_user not in (None, UNKNOWN):
            # Another enrolled person's voice while someone else is in view: never erase on their word.
            verdict = EraseVerdict.CONFIRM if verdict == EraseVerdict.ALLOW else verdict
        if verdict == EraseVerdict.REFUSE:
            return Handled(REFUSE_LINE, "forget refused: another person's voice")
        if verdict == EraseVerdict.CONFIRM or target is None:
            return Handled(CONFIRM_LINE, "forget: asked to confirm (identity unsure)")
        if request.topic is not None:
            return self._forget_topic(target, request.topic)
        report = self.store.delete_user(target, cause="forget me (by voice, verified by face and voice)")
        self.identifier.remove_user(target)
        self._forgotten.add(target)
        self._hold_back()
        return Handled(deleted_line(report), f"forget: purged {target}")

    def _forget_topic(self, target: str, topic: str) -> Handled:
        ids = facts_about(self.store.list_facts(target, include_history=True), topic)
        if not ids:
            return Handled(f"I don't have anything about {topic} from you.", "forget topic: nothing matched")
        n = self.store.forget_facts(target, ids, cause="forget a topic (by voice, verified by face and voice)")
        return Handled(f"Done: I've forgotten {n} thing{'s' if n != 1 else ''} about {topic}.", f"forget topic: {n}")

    def _hold_back(self) -> None:
        with self._lock:
            last = self._last
        if last is not None and (last.face is not None or last.voice is not None):
            self.gate.hold_back(last)


def deleted_line(report: DeletionReport) -> str:
    """What a purge deleted, said back to the person."""
    r = report.removed
    parts = [
        f"{r.get('identity_keys', 0)} face and voice prints",
        f"{r.get('facts', 0)} facts",
        f"{r.get('relations', 0)} relations",
        f"{r.get('episodes', 0)} conversations",
    ]
    return "I've forgotten you: I deleted " + ", ".join(parts) + "."
