"""How sensitive a fact is, and who may hear it.

A fact's sensitivity is decided when it is extracted (`classify`: health, money, relationships,
or `private` when the person asked to keep it between us) and can be overridden by the person
or an admin later (`MemoryStore.set_fact_sensitivity`). The rule of who may hear it (`may_recall`)
is the same for Level 1, Level 2 and `ask`:
- a fact that is not sensitive: anyone;
- a sensitive fact: only its owner (or an admin), and in the dialog only when nobody else is present.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from egomem.privacy._text import normalise, without_quotes
from egomem.schemas import Sensitivity

_LEXICON: tuple[tuple[Sensitivity, re.Pattern[str]], ...] = (
    (
        Sensitivity.HEALTH,
        re.compile(
            r"\b(?:health|ill|illness|sick|disease|diagnos\w*|cancer|tumou?r|diabet\w*|asthma|allerg\w*|"
            r"pregnan\w*|miscarriage|surgery|operation|hospital\w*|doctor|therap\w*|therapist|psychiatr\w*|"
            r"depress\w*|anxiety|adhd|autis\w*|dementia|alzheimer\w*|medication|medicine|pills?|prescription|"
            r"chemo\w*|blood pressure|heart attack|stroke|hiv|std|injur\w*|disabilit\w*|rehab|addict\w*|"
            r"alcoholi\w*|mental health|panic attacks?|insomnia|migraines?|covid)\b"
        ),
    ),
    (
        Sensitivity.MONEY,
        re.compile(
            r"\b(?:salary|salaries|income|debts?|loans?|mortgage|bankrupt\w*|broke|savings|bank account|"
            r"credit card|pin|password|owes?|owed|paid \$?\d|earns?|earning|wages?|pay rise|raise at work|"
            r"taxes|tax return|inheritance|investments?|stocks?|crypto\w*|\$\d|€\d|£\d|\d+ (?:dollars|euros|pounds))\b"
        ),
    ),
    (
        Sensitivity.RELATIONSHIP,
        re.compile(
            r"\b(?:divorc\w*|separat\w+ from|break ?up|broke up|dating|affair|cheat\w*|boyfriend|girlfriend|"
            r"crush on|in love with|ex-?wife|ex-?husband|ex-?partner|custody|fight with|argu\w+ with|"
            r"falling out|sexual\w*|gay|lesbian|bisexual|transgender|pregnant by)\b"
        ),
    ),
)

_PRIVATE = re.compile(
    r"\b(?:keep (?:this|that|it) (?:between us|to yourself|private|secret|quiet)|between you and me|"
    r"(?:don't|do not) tell (?:anyone|anybody|them|him|her)|(?:this|that|it) is (?:private|a secret|confidential)|"
    r"(?:it's|that's) (?:private|a secret|confidential)|off the record|just between us|promise not to tell)\b"
)


def classify(text: str) -> Sensitivity:
    """The sensitivity of a fact's text by what it is about (health first: it is the strictest)."""
    said = normalise(text)
    for sensitivity, pattern in _LEXICON:
        if pattern.search(said):
            return sensitivity
    return Sensitivity.NONE


def asks_privacy(text: str) -> bool:
    """The speaker asks to keep what they said private ("keep that between us", "don't tell anyone")."""
    said = normalise(without_quotes(text))
    return _PRIVATE.search(said) is not None


def decide(fact_text: str, source_text: str | None = None, *, private_session: bool = False) -> Sensitivity:
    """The sensitivity set at extraction: `private` when the person asked for privacy in the utterance
    the fact came from (or anywhere in its session: `private_session`), else `classify`."""
    if private_session or (source_text is not None and asks_privacy(source_text)):
        return Sensitivity.PRIVATE
    by_text = classify(fact_text)
    if by_text == Sensitivity.NONE and source_text:
        return classify(source_text)
    return by_text


def is_sensitive(sensitivity: Sensitivity | str) -> bool:
    return Sensitivity(sensitivity) != Sensitivity.NONE


def may_recall(
    sensitivity: Sensitivity | str,
    owner: str,
    listener: str | None,
    *,
    others_present: Sequence[str] = (),
    admin: bool = False,
) -> bool:
    """Whether a fact of `owner` may be given to `listener` while `others_present` can hear.

    Not sensitive: always. Sensitive: never while someone other than the owner is present (the
    robot speaks aloud), and otherwise only to its owner or an admin."""
    if not is_sensitive(sensitivity):
        return True
    if any(o != owner for o in others_present):
        return False
    return admin or listener == owner
