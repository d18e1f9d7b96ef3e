"""The privacy readers on ordinary phrasing, quotes, jokes and negations."""

from __future__ import annotations

import pytest

from egomem.privacy.consent import (
    NOTICE,
    QUESTION,
    WRONG_PERSON,
    ConsentDialog,
    ConsentPolicy,
    ConsentState,
    Reply,
    default_policy,
    is_withdrawal,
    read_reply,
)
from egomem.privacy.forget import mentions, read_forget_request
from egomem.privacy.sensitivity import asks_privacy, classify, decide, may_recall
from egomem.schemas import Sensitivity


@pytest.mark.parametrize(
    ("text", "reply"),
    [
        ("Yes, that's fine.", Reply.YES),
        ("Sure, go ahead", Reply.YES),
        ("okay", Reply.YES),
        ("No problem at all", Reply.YES),
        ("I don't mind.", Reply.YES),
        ("No thanks.", Reply.NO),
        ("I'd rather you didn't", Reply.NO),
        ("Please don't.", Reply.NO),
        ("That's not okay with me", Reply.NO),
        ("Maybe later.", Reply.LATER),
        ("Not now, ask me another time", Reply.LATER),
        ("Let me think about it", Reply.LATER),
        ("What's the weather like?", Reply.NONE),
        ("Yes, just kidding", Reply.NONE),
        ("", Reply.NONE),
    ],
)
def test_consent_replies_in_ordinary_phrasing(text: str, reply: Reply) -> None:
    assert read_reply(text) == reply


def test_default_policy_by_command() -> None:
    assert default_policy("live") == ConsentPolicy.ASK
    assert default_policy("serve") == ConsentPolicy.ASK
    for command in ("memorize", "run", "demo"):
        assert default_policy(command) == ConsentPolicy.IMPLICIT


def test_the_question_is_asked_once_and_only_the_asked_person_answers() -> None:
    dialog = ConsentDialog(ConsentPolicy.ASK)
    assert dialog.greet("p1") == QUESTION
    assert dialog.greet("p1") is None  # once
    other = dialog.answer("p1", "u_ben", "Yes, sure")
    assert other is not None and other.say == WRONG_PERSON and other.event is None
    assert dialog.state("p1") == ConsentState.ASKED
    assert dialog.answer("p1", None, "How are you?") is None  # not an answer: the question stands
    yes = dialog.answer("p1", None, "Yes, you can")
    assert yes is not None and yes.event == "consent" and yes.evidence == "Yes, you can"
    assert dialog.state("p1") == ConsentState.CONSENTED
    assert dialog.answer("p1", None, "no") is None  # decided


def test_refusal_and_notice_and_implicit() -> None:
    dialog = ConsentDialog(ConsentPolicy.ASK)
    dialog.greet("p2")
    no = dialog.answer("p2", "p2", "No, I'd rather you didn't")
    assert no is not None and (no.state, no.event) == (ConsentState.REFUSED, "refusal")
    notice = ConsentDialog(ConsentPolicy.NOTICE)
    assert notice.greet("p3") == NOTICE and notice.state("p3") == ConsentState.CONSENTED
    assert ConsentDialog(ConsentPolicy.IMPLICIT).greet("p4") is None


def test_withdrawal() -> None:
    assert is_withdrawal("I withdraw my consent")
    assert is_withdrawal("Please stop recognising me")
    assert not is_withdrawal("she said stop recognizing me, haha")


@pytest.mark.parametrize(
    "text",
    [
        "Forget me.",
        "Please forget everything about me",
        "Can you delete all my data?",
        "I want you to erase everything you know about me.",
    ],
)
def test_forget_me_requests(text: str) -> None:
    request = read_forget_request(text)
    assert request is not None and request.topic is None


@pytest.mark.parametrize(
    "text",
    [
        "She said forget me and walked out.",
        'The song goes "forget me, forget me not".',
        "Forget me? Just kidding.",
        "Don't forget me!",
        "Please never forget me.",
        "He told me to forget him",
        "Forget me, haha",
        "I forgot my keys",
    ],
)
def test_not_forget_me_requests(text: str) -> None:
    assert read_forget_request(text) is None


def test_forget_what_i_said_about_a_topic() -> None:
    request = read_forget_request("Please forget what I said about my sister's wedding.")
    assert request is not None and request.topic == "my sister's wedding"
    assert mentions("Her sister's wedding is in June", request.topic)
    assert not mentions("She plays tennis on Sundays", request.topic)
    assert read_forget_request("He said forget what I said about the dentist") is None


def test_sensitivity_at_extraction() -> None:
    assert classify("has diabetes and takes insulin") == Sensitivity.HEALTH
    assert classify("owes the bank 20,000 on a loan") == Sensitivity.MONEY
    assert classify("is going through a divorce") == Sensitivity.RELATIONSHIP
    assert classify("plays tennis on Sundays") == Sensitivity.NONE
    assert asks_privacy("I'm applying for a new job, keep that between us.")
    assert decide("is applying for a new job", "I'm applying for a new job, keep that between us.") == "private"
    assert decide("is applying for a new job", "I'm applying for a new job.") == Sensitivity.NONE


def test_who_may_hear_a_sensitive_fact() -> None:
    assert may_recall(Sensitivity.NONE, "anna", "ben", others_present=["ben"])
    assert may_recall(Sensitivity.HEALTH, "anna", "anna")
    assert not may_recall(Sensitivity.HEALTH, "anna", "anna", others_present=["ben"])
    assert not may_recall(Sensitivity.HEALTH, "anna", "ben")
    assert may_recall(Sensitivity.HEALTH, "anna", "ben", admin=True)
