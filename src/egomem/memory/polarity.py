"""What the person said has ended is not written as holding.

"I no longer enjoy crossword puzzles" retracts a liking. A small model often writes the
sentence's content without its negation ("enjoys crossword puzzles", a polarity flip), which
would store the very thing the person said has stopped: such an item is dropped. The model's
negated item itself ("no longer makes cakes") is kept, and it also closes the fact it names
("makes cakes every week"), as the rules' own retraction would (memory/rules_update.py).

The other way round, a small model sometimes marks as retracted what the person just said
holds ("we moved to Paris last month" -> retract "moved to Paris"), which would close the very
fact the session brought: a retraction whose source says it, word for word, with no ending or
negative word in that clause, is dropped (`retracts_what_holds`). The model's quoted source is not
always the line it retracts, so the same test runs over every turn of the session
(`retracts_what_the_session_holds`).

The check is narrow on purpose: only words that say a state *ended* ("no longer", "any more",
"stopped", "quit", "gave up", "gone off", "lost interest", "used to") count, in a clause of the
source that holds the item's words; a plain negation ("I can't eat nuts") is left to the
extractor, since "is allergic to nuts" rightly says it without a negative word.
"""

from __future__ import annotations

import re

from egomem.memory.items import ExtractedItem
from egomem.memory.rules_update import content_stems
from egomem.memory.statements import is_question
from egomem.memory.wishes import states_a_wish

_ENDED = re.compile(
    r"\b(?:no longer|any ?more|stopped|quit|gave up|given up|gone off|went off|lost (?:all )?interest|used to)\b",
    re.IGNORECASE,
)
# An item with one of these says the state ended or is negative ("dislikes loud music").
_NEGATIVE = frozenset(
    "not no never longer anymore stopped quit gave given used former formerly ex lost off dislikes hates".split()
)
_CLAUSES = re.compile(r"[,;:.!?]\s*|\s+(?:but|though|although|while|whereas|and)\s+", re.IGNORECASE)
_NOW = re.compile(r"\b(?:now|these days|nowadays|currently|instead)\b", re.IGNORECASE)
_ENDED_ITEM = re.compile(r"^(?:no longer|(?:has )?stopped|quit|gave up|(?:has )?given up)\s+(\S.*)$", re.IGNORECASE)


def _negative(text: str) -> bool:
    words = re.findall(r"[a-z']+", text.lower())
    return any(w in _NEGATIVE or w.endswith("n't") for w in words)


def asserts_what_ended(item: ExtractedItem) -> bool:
    """Whether a fact or preference states as holding what its source says has ended: a clause
    of the source with an ending word holds every word of the item after its verb ("makes
    cakes" in "I don't bake cakes any more"). A change ("works as a nurse") is what holds now;
    and a source that says what holds now in another clause ("I used to hate running but now I
    love it") is left to the extractor."""
    if item.kind not in ("fact", "preference") or item.retract or item.change or _negative(item.text):
        return False
    stems = content_stems(item.text)
    what = set(stems[1:] or stems)
    if not what:
        return False
    clauses = [c for c in _CLAUSES.split(item.source_text) if c.strip()]
    ended = [c for c in clauses if _ENDED.search(c)]
    if any(_NOW.search(c) for c in clauses if c not in ended):
        return False
    return any(what <= set(content_stems(c)) for c in ended)


def retraction_of(item: ExtractedItem) -> ExtractedItem | None:
    """The retraction an ended-state item implies ("no longer makes cakes" -> retract "makes
    cakes"), or None when the item says no state ended."""
    if item.kind not in ("fact", "preference") or item.retract:
        return None
    m = _ENDED_ITEM.match(item.text.strip())
    if m is None:
        return None
    return item.model_copy(update={"text": m.group(1).strip(), "retract": True})


# Words that say the clause is about leaving something: "I switched from running to cycling".
_LEAVING = re.compile(r"\b(?:from|instead of|rather than|switched|changed|left|away|out of)\b", re.IGNORECASE)


def retracts_what_holds(item: ExtractedItem) -> bool:
    """Whether a retraction names what its source says holds: a clause of the source holds
    every word of the item, verb included, and no word of ending, leaving or negation ("moved to
    Paris" in "Oh, and we moved to Paris last month"). "I moved from London to Paris" does not hold
    "lives in London" (no "live"), and "from" is leaving, so retracting that stays; so does any
    clause with "quit", "not", "switched from", ..."""
    if item.kind not in ("fact", "preference") or not item.retract:
        return False
    what = set(content_stems(item.text))
    if not what:
        return False
    clauses = [c for c in _CLAUSES.split(item.source_text) if c.strip()]
    return any(
        what <= set(content_stems(c)) and not (_ENDED.search(c) or _LEAVING.search(c) or _negative(c)) for c in clauses
    )


def retracts_what_the_session_holds(item: ExtractedItem, turns: list[str], taken_back: set[int]) -> bool:
    """`retracts_what_holds` over every user turn of the session, not only the item's quoted source:
    a retraction is dropped when a clause holds every word of the item with no ending, leaving or
    negative word of its own (a negative word the item itself has, as in "can't stand cucumber", is
    what is retracted, not a sign of retracting), in a turn the user did not take back
    (`taken_back`: statements.joke_turns), and no clause that holds its words says the state ended,
    was left, is not so, or was a joke. Found on the dev scenarios of `bench conversation`: after
    "I'm actually a secret agent. Ha, no, just joking." the 1.5B model also retracted four things the
    person had just said holding ("I always go to church every Sunday.", "I can't stand cucumber."),
    quoting the joke as their source, and the update agent closed the two the rules had written."""
    if item.kind not in ("fact", "preference") or not item.retract:
        return False
    stems = content_stems(item.text)
    what, thing = set(stems), set(stems[1:] or stems)  # the whole item; what it is about, without its verb
    if not what:
        return False
    own_negative = _negative(item.text)
    holds = ended = False
    for i, turn in enumerate(turns):
        for clause in (c for c in _CLAUSES.split(turn) if c.strip()):
            if is_question(clause) or states_a_wish(clause):  # says nothing of what holds now
                continue
            words = set(content_stems(clause))
            # An ending names the thing in its own words ("lost interest in gardening" ends "loves gardening").
            ending = i in taken_back or bool(_ENDED.search(clause) or _LEAVING.search(clause))
            if thing <= words and (ending or (_negative(clause) and not own_negative)):
                ended = True
            elif what <= words and not ending:
                holds = True
    return holds and not ended
