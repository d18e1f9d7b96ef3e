"""Consent to keep a face and a voice: the policy, the one question, and reading the answer.

Policies (`[privacy] consent`):
- `ask`: a new person's keys stay in memory only until they agree; the agent asks once, in
  words (`QUESTION`), and reads yes / no / later from the answer in ordinary phrasing.
- `notice`: keys are kept at once; the agent says once what it keeps and how to undo it (`NOTICE`).
- `implicit`: keys are kept at once, nothing is said (recordings a user owns: memorize, run, demo).

`ConsentDialog` is the per-person state machine (pure: no store, no biometrics). Its outcome is
a `ConsentDecision` that the runtime turns into a stored event and a gate action.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum

from egomem.privacy._text import is_joke, normalise, without_quotes


class ConsentPolicy(StrEnum):
    ASK = "ask"
    NOTICE = "notice"
    IMPLICIT = "implicit"


# The commands whose input a user owns (their own recording): nobody new is asked.
OWNED_RECORDING_COMMANDS = frozenset({"memorize", "run", "demo", "bench"})


def default_policy(command: str) -> ConsentPolicy:
    """The policy when `[privacy] consent` is not set: `implicit` for a recording a user owns,
    `ask` for everything that meets people live (`live`, `serve`, anything else)."""
    return ConsentPolicy.IMPLICIT if command in OWNED_RECORDING_COMMANDS else ConsentPolicy.ASK


def resolve_policy(configured: str | None, command: str) -> ConsentPolicy:
    """`[privacy] consent` when set, else the command's default."""
    return ConsentPolicy(configured) if configured else default_policy(command)


QUESTION = (
    "Hello, I don't think we've met. May I remember your face and voice so I can recognise you next time? "
    "You can say yes, no, or ask me later."
)
NOTICE = (
    "Just so you know: I remember faces and voices to recognise people. "
    "Say 'forget me' at any time and I will delete everything about you."
)
THANKS = "Thank you, I'll remember you."
REFUSED = "Understood, I won't keep anything that could recognise you."
LATER = "Of course, I won't keep anything that could recognise you for now."
WRONG_PERSON = "I need to hear that from the person I asked."
WITHDRAWN = "Understood: I've deleted your face and voice prints and won't recognise you any more."


class Reply(StrEnum):
    YES = "yes"
    NO = "no"
    LATER = "later"
    NONE = "none"  # not an answer to the question


# Ordered: the first pattern that matches decides (later before no, since "not now" is not a no;
# a negated yes before yes, since "not okay" holds "okay"; "no problem" is a yes).
_READERS: tuple[tuple[Reply, re.Pattern[str]], ...] = (
    (
        Reply.LATER,
        re.compile(
            r"\b(?:later|not now|not right now|not yet|another time|some other time|let me think|"
            r"i'll think about it|i need to think|maybe|not sure|i don't know yet|ask me again)\b"
        ),
    ),
    (Reply.YES, re.compile(r"\b(?:no problem|no worries|why not|i don't mind|don't mind)\b")),
    (
        Reply.NO,
        re.compile(
            r"\b(?:no|nope|nah|never|no thanks|no thank you|rather not|i'd rather you didn't|please don't|"
            r"don't|do not|not okay|not ok|not fine|i don't want|i do not want|i don't agree|i refuse|"
            r"absolutely not|definitely not|certainly not)\b"
        ),
    ),
    (
        Reply.YES,
        re.compile(
            r"\b(?:yes|yeah|yep|yup|sure|ok|okay|alright|all right|of course|fine|go ahead|please do|"
            r"i agree|i consent|you can|you may|absolutely|definitely|certainly|that's fine|sounds good)\b"
        ),
    ),
)

_WITHDRAW = re.compile(
    r"\b(?:i withdraw (?:my )?consent|withdraw my consent|stop recogni[sz]ing me|don't recogni[sz]e me any ?more|"
    r"do not recogni[sz]e me any ?more|delete my (?:face|voice)(?: and (?:face|voice))?(?: prints?)?)\b"
)


def read_reply(text: str) -> Reply:
    """What an answer to `QUESTION` says: yes, no, later, or none (not an answer, or said in jest)."""
    said = normalise(without_quotes(text))
    if not said or is_joke(said):
        return Reply.NONE
    for reply, pattern in _READERS:
        if pattern.search(said):
            return reply
    return Reply.NONE


def is_withdrawal(text: str) -> bool:
    """A consenting person takes their consent back ("stop recognising me"): their keys go."""
    said = normalise(without_quotes(text))
    return bool(said) and not is_joke(said) and _WITHDRAW.search(said) is not None


class ConsentState(StrEnum):
    UNASKED = "unasked"
    ASKED = "asked"
    CONSENTED = "consented"
    REFUSED = "refused"
    DEFERRED = "deferred"  # "later": nothing kept, not asked again in this visit


@dataclass(frozen=True)
class ConsentDecision:
    """What one turn decided: `event` is the kind to store (consent / refusal / None), `say` the reply."""

    person: str
    state: ConsentState
    event: str | None
    say: str | None
    evidence: str


@dataclass
class ConsentDialog:
    """Asks each new person once and reads their answer. People are the gate's in-memory ids."""

    policy: ConsentPolicy
    _states: dict[str, ConsentState] = field(default_factory=dict)

    def state(self, person: str) -> ConsentState:
        return self._states.get(person, ConsentState.UNASKED)

    def greet(self, person: str) -> str | None:
        """The line to say when `person` (not yet consenting) becomes the current user: the question
        under `ask`, the notice under `notice`, once per person; None otherwise."""
        if self.state(person) != ConsentState.UNASKED or self.policy == ConsentPolicy.IMPLICIT:
            return None
        if self.policy == ConsentPolicy.NOTICE:
            self._states[person] = ConsentState.CONSENTED
            return NOTICE
        self._states[person] = ConsentState.ASKED
        return QUESTION

    def answer(self, asked: str, speaker: str | None, text: str) -> ConsentDecision | None:
        """A turn while `asked` has been asked and has not answered. `speaker`: who said the turn by
        their own voice (None: nobody else's voice, taken as the asked person). A yes or no from
        someone else is not theirs to give. None: the turn is not an answer (the question stands)."""
        if self.state(asked) != ConsentState.ASKED:
            return None
        reply = read_reply(text)
        if reply == Reply.NONE:
            return None
        if speaker is not None and speaker != asked:
            return ConsentDecision(asked, ConsentState.ASKED, None, WRONG_PERSON, text)
        state, event, say = {
            Reply.YES: (ConsentState.CONSENTED, "consent", THANKS),
            Reply.NO: (ConsentState.REFUSED, "refusal", REFUSED),
            Reply.LATER: (ConsentState.DEFERRED, "deferral", LATER),
        }[reply]
        self._states[asked] = state
        return ConsentDecision(asked, state, event, say, text)
