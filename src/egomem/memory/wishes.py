"""Wishes and plans are not likings.

"I'd like to learn tennis" says the person wants to learn it, not that they like tennis;
"I'm going to try surfing" is a plan. `plan_in` reads a first-person wish or plan into its
canonical fact ("wants to learn tennis", "is going to try surfing", "plans to take up golf");
`liking_from_wish` finds a liking ("likes tennis") or a habit ("plays tennis") whose only
evidence in what the user said is such a wish, whatever extractor wrote it, and gives the plan
to store instead.
Written from general phrasings, not from any one script.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime

from egomem.memory.rules_text import INTENSIFIERS, LIKING_VERBS, clean_object, relative_dates, third_person

_ADV = rf"(?:{INTENSIFIERS} )*"
_I = r"\b(?:i|we)"
_I_AM = r"\b(?:i'm|i am|we're|we are)"
# What a conditional wish may be about and still be a goal ("I'd love to learn the piano"); with
# any other verb it is a request or a daydream ("I'd like to know your name", "I'd like a coffee").
GOAL_VERBS = r"(?:learn|start|take up|get into|try|begin|study|practi[cs]e|become|visit|travel)\b"
# "going to" a place is not a plan to do something: "I'm going to the gym".
_NOT_A_VERB = r"(?!(?:the|a|an|my|our|your|his|her|their|this|that|bed|school|work|church|class|college)\b)"
# (the wish or plan said, the canonical verb of the fact); the object follows in group `what`.
_FORMS: list[tuple[str, str]] = [
    (rf"{_I}(?:'d| would) {_ADV}(?:like|love) to (?P<what>{GOAL_VERBS}[^,.;!?]*)", "wants to"),
    (rf"{_I}(?:'d| would) {_ADV}(?:like|love) to (?P<what>[a-z][^,.;!?]*)", ""),  # a wish, not a goal
    (rf"{_I} {_ADV}(?:want to|wanna) (?P<what>[a-z][^,.;!?]*)", "wants to"),
    (rf"{_I} {_ADV}can(?:'t|not) wait to (?P<what>[a-z][^,.;!?]*)", "wants to"),
    (rf"{_I} {_ADV}(?:plan|intend|aim) (?P<how>to|on) (?P<what>[a-z][^,.;!?]*)", "plans {}"),
    (rf"{_I} {_ADV}hope to (?P<what>[a-z][^,.;!?]*)", "hopes to"),
    (rf"{_I_AM} {_ADV}(?:planning|intending|aiming) (?P<how>to|on) (?P<what>[a-z][^,.;!?]*)", "is planning {}"),
    (rf"{_I_AM} {_ADV}hoping to (?P<what>[a-z][^,.;!?]*)", "hopes to"),
    (rf"{_I_AM} {_ADV}(?:going to|gonna) (?P<what>{_NOT_A_VERB}[a-z][^,.;!?]*)", "is going to"),
    (
        rf"{_I_AM} {_ADV}(?P<how>looking forward to|thinking (?:of|about)|considering) (?P<what>[a-z][^,.;!?]*)",
        "is {}",
    ),
]
_COMPILED = [(re.compile(p, re.I), verb) for p, verb in _FORMS]
# A wish under a condition or for a far-off day stays a wish: not a plan worth a fact.
_CONDITION = re.compile(r"\b(?:if|unless|someday|some day|one day|maybe|perhaps|in another life)\b", re.I)
# Words a liking and a wish share that say nothing of what it is about.
_FILLER = frozenset(
    "the a an and or for with their his her them about to of in on at new more lot very really things "
    "play playing do doing go going learn learning learned how some".split()
)
_LIKING_ITEM = re.compile(
    r"^(?:[A-Z][\w'-]* )?(?:likes|loves|enjoys|adores|prefers|is into|is interested in|is keen on|"
    r"is passionate about|is (?:a )?(?:big |huge )?fan of|is crazy about)\s+(?P<obj>.+)$",
    re.I,
)
# A habit said of the person: "plays tennis", "goes hiking", "is a keen tennis player".
_DOING_ITEM = re.compile(
    r"^(?:[A-Z][\w'-]* )?(?:(?:regularly|often|usually|sometimes) )?(?:plays|does|practi[cs]es|goes)\s+(?P<obj>.+)$|"
    r"^(?:[A-Z][\w'-]* )?is (?:a|an) (?:keen |avid |regular )?(?P<player>[\w -]+?) (?:player|fan)$",
    re.I,
)
# The user saying they like something now (not "I'd like", not "I don't like").
_LIKING_SAID = re.compile(
    rf"{_I} {_ADV}(?:do )?{LIKING_VERBS}\b|{_I_AM} {_ADV}(?:into|a (?:big |huge )?fan of|"
    r"passionate about|keen on|crazy about|interested in)\b|\bmy (?:favou?rite|passion|hobby)\b|"
    r"\bis my (?:favou?rite|passion|hobby)\b",
    re.I,
)


# A plan or wish already written as one, under any kind: "wants to learn tennis".
_PLAN_TEXT = re.compile(
    r"^(?:[A-Z][\w'-]* )?(?:wants|plans|hopes|intends|would (?:like|love)|is (?:going|planning|hoping|aiming) "
    r"(?:to|on)|is looking forward|is thinking (?:of|about)|is considering)\b",
    re.I,
)


def is_plan_text(text: str) -> bool:
    """Whether an item's text is a wish or plan ("wants to learn tennis", "is going to move")."""
    return _PLAN_TEXT.match(text.strip()) is not None


def _wish(sentence: str) -> tuple[str, str, str] | None:
    """(the verb of the fact, '' for a wish that is no goal; its object; the words of the wish)."""
    for rx, verb in _COMPILED:
        m = rx.search(sentence.replace("’", "'"))
        if m is not None:
            how = m.groupdict().get("how")
            return verb.format(how.lower()) if how else verb, m.group("what"), m.group(0)
    return None


def states_a_wish(sentence: str) -> bool:
    """Whether `sentence` says the person would like, wants or plans something ("I'd like to learn
    tennis"): about a future, not what holds now."""
    return _wish(sentence) is not None


def plan_in(sentence: str, day: datetime | None = None) -> str | None:
    """The wish or plan `sentence` states, as a fact ("wants to learn to play tennis"); None when
    it states none, or only a wish under a condition or with no goal in it. With the session's
    `day`, relative dates become absolute ("next week" -> "in the week after 3 May 2024")."""
    w = _wish(sentence)
    if w is None or not w[0] or _CONDITION.search(sentence):
        return None
    verb, what, _ = w
    what = re.sub(r"\s+(?:too|as well|also)$", "", what.strip(), flags=re.I)
    obj = clean_object(relative_dates(what, day) if day else what, 10)
    return f"{verb} {third_person(obj)}" if obj else None


def _keywords(obj: str) -> list[str]:
    words = [w for w in re.findall(r"[a-z][a-z'-]+", obj.lower()) if len(w) >= 3]
    content = [w for w in words if w not in _FILLER]
    return content or words


def _says_doing(sentence: str, keys: list[str]) -> bool:
    """Whether `sentence` (with any wish taken out) has the user say they do it: a first-person
    statement, not a question, that still names it ("I played tennis this morning")."""
    if sentence.rstrip().endswith("?"):
        return False
    has_key = any(re.search(rf"\b{re.escape(k)}", sentence) for k in keys)
    return has_key and re.search(r"\b(?:i|i'm|i've|we|we're|we've|my)\b", sentence) is not None


def liking_from_wish(text: str, sentences: Iterable[str]) -> tuple[str | None, str] | None:
    """For a liking item `text` ("likes tennis") or a habit ("plays tennis"), when the user's
    `sentences` hold a wish or plan about it and no sentence saying they like it (for a habit:
    that they do it): (the plan fact to store instead, or None when the wish is no plan; the
    sentence it comes from). None: neither a liking nor a habit, or it was said."""
    text = text.strip()
    m = _LIKING_ITEM.match(text)
    doing = m is None
    if doing:
        m = _DOING_ITEM.match(text)
    if m is None:
        return None
    # A habit item names its object as "plays <obj>" or "is a keen <player> player".
    obj = (m.group("obj") or m.group("player")) if doing else m.group("obj")
    keys = _keywords(obj)
    if not keys:
        return None
    wished: list[str] = []
    for s in sentences:
        low = s.lower().replace("’", "'")
        if not any(re.search(rf"\b{re.escape(k)}", low) for k in keys):
            continue
        w = _wish(low)
        rest = low.replace(w[2], " ") if w else low
        if _LIKING_SAID.search(rest) or (doing and _says_doing(rest, keys)):
            return None  # the user does say they like it, or do it
        if w is not None and any(re.search(rf"\b{re.escape(k)}", w[1]) for k in keys):
            wished.append(s)
    if not wished:
        return None
    return plan_in(wished[0]), wished[0]
