"""Reading a request to be forgotten: "forget me", "delete everything about me", "forget what I said about X".

A request is the speaker's own words, meant: never a quote ("she said forget me", or the words
inside quotation marks), never said in jest ("forget me, just kidding"), never negated
("don't forget me", "please never forget me"), never a question about the feature ("can you
forget people?" is a question; "can you forget me?" is a request).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from egomem.privacy._text import REPORTING, is_joke, normalise, without_quotes
from egomem.schemas import Fact

_ME = r"(?:me|everything about me|all about me|all my data|my data|everything you know about me|who i am|i was here)"
_ERASE = r"(?:forget|delete|erase|remove|wipe|purge)"
_WHOLE = re.compile(rf"\b{_ERASE} {_ME}\b")
_TOPIC = re.compile(
    rf"\b{_ERASE} (?:what|everything|anything|all) (?:that )?i (?:said|told you|mentioned|talked about) "
    r"(?:about|regarding|on) (?P<topic>[^.?!,;]+)"
)
_NEGATED = re.compile(r"\b(?:don't|do not|never|won't|wouldn't|shouldn't|mustn't|not) (?:ever )?(?:\w+ ){0,2}$")
_REPORTED = re.compile(rf"\b{REPORTING}(?: (?:to|that|me|you|him|her|them))*\s*$")


@dataclass(frozen=True)
class ForgetRequest:
    """`topic` None: forget the whole person; else forget the facts about that topic."""

    topic: str | None
    evidence: str


def _reported_or_negated(said: str, start: int) -> bool:
    before = said[:start]
    last_clause = re.split(r"[.!?;]", before)[-1]
    return bool(_NEGATED.search(last_clause) or _REPORTED.search(last_clause.rstrip(", ")))


def read_forget_request(text: str) -> ForgetRequest | None:
    """The request in one user turn, or None when the turn asks nothing of the kind."""
    said = normalise(without_quotes(text))
    if not said or is_joke(said):
        return None
    m = _TOPIC.search(said)
    if m and not _reported_or_negated(said, m.start()):
        topic = re.sub(r"\b(?:please|now|okay|ok|thanks|thank you)\b", " ", m.group("topic"))
        topic = " ".join(topic.split()).strip(" '\"")
        return ForgetRequest(topic or None, text) if topic else None
    m = _WHOLE.search(said)
    if m and not _reported_or_negated(said, m.start()):
        return ForgetRequest(None, text)
    return None


_STOP = frozenset(
    "a an the my our your his her their about of on in to and or for with me i is was were it this that".split()
)


def topic_terms(topic: str) -> set[str]:
    """The content words of a topic ("my sister's wedding" -> {sister, wedding})."""
    words = re.findall(r"[a-z0-9]+", normalise(topic).replace("'s ", " "))
    return {w for w in words if w not in _STOP and len(w) > 1}


def mentions(text: str, topic: str) -> bool:
    """Whether a fact's text is about `topic`: every content word of the topic appears in it
    (prefix match, so "dentist" finds "dentists", "wedding" finds "weddings")."""
    terms = topic_terms(topic)
    if not terms:
        return False
    words = re.findall(r"[a-z0-9]+", normalise(text))
    return all(any(w.startswith(t) or (t.startswith(w) and len(w) > 3) for w in words) for t in terms)


def facts_about(facts: Sequence[Fact], topic: str) -> list[str]:
    """Ids of the facts (current and superseded: pass the history too) that are about `topic`."""
    return [f.id for f in facts if mentions(f.text, topic)]
