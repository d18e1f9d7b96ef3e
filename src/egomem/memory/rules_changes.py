"""Rules for changes of state: what the user says has ended, and what holds now.

A change is said in many shapes: "I used to work as a teacher, now I'm a nurse", "I
quit my job at Acme, these days I work at Bolt", "I switched from running to cycling",
"I switched to tea instead of coffee". The old state is never written as a current fact:
it becomes a retraction (`retract`), which the update rules turn into a close of the
stored fact that says it (with its history); the new state is read by the ordinary
rules and marked `change`, so it supersedes the old value of its slot. Negated forms
("I never used to ...", "I haven't switched ...") do not match; hypothetical and reported
sentences never reach these rules (memory/statements.py drops them first).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from egomem.memory.rules_text import Collector, clean_object, third_person, verb_phrase_3rd

_I = r"\b(?:i|we)"
# Where what holds now begins: "..., now I ...", "... but these days we ...", "...; since then I ...".
_NOW = r"(?:now|these days|nowadays|since then|at the moment|instead)"
_NEW_PART = re.compile(rf"(?:\s*[,;]\s*|\s+)(?:(?:but|and|so)\s+)?{_NOW}\b,?\s+(?=(?:i|i'm|we|we're)\b)", re.I)
# After an ended state ("I used to ...", "I'm not a student anymore"), a plain ", I ..." or
# "but I ..." turns to the present ("I used to smoke but I quit", "..., I work as a designer now").
_BUT_PART = re.compile(r"(?:\s*[,;]\s*(?:but\s+)?|\s+but\s+)(?=(?:i|i'm|we|we're)\b)", re.I)
_USED_TO = re.compile(rf"{_I} (?:also |once |always )?used to ([a-z][^,.;!?]*)", re.I)
_ENDED = re.compile(
    rf"{_USED_TO.pattern}|\buntil\b|\b(?:any ?more|no longer)\b|"
    rf"{_I}(?:'ve| have)? (?:just |finally )?(?:stopped|quit|left|gave up)\b",
    re.I,
)
_SWITCHED = re.compile(
    rf"{_I}(?:'ve| have)? (?:just |recently |finally |now |since )?(?:switched|changed|converted|gone over|went over)"
    r"(?: from (?P<old1>[^,.;!?]+?))? (?:over )?to (?P<new>[^,.;!?]+?)"
    r"(?: (?:instead of|rather than|from) (?P<old2>[^,.;!?]+?))?(?=\s*[,.;!?]|\s*$| and | but | because | now\b)",
    re.I,
)
# "I lived in Rome until 2019", "I was a teacher until last year": a past state with a recent
# end. Only an end in time counts: "until I was ten" may be a childhood long undone since.
_MONTH = r"(?:january|february|march|april|may|june|july|august|september|october|november|december)"
_UNTIL = re.compile(
    rf"{_I} (?P<verb>was|were|lived|worked) (?P<what>[a-z][^,.;!?]*?) until (?:the end of |early |late )?"
    rf"(?:(?:19|20)\d\d|last \w+|recently|this \w+|{_MONTH}|(?:a|one|two|three|four|five|a few|\d+) \w+ ago)\b",
    re.I,
)
_PRESENT = {"was": "am", "were": "am", "lived": "live", "worked": "work"}
# "I stopped working as an engineer", "I gave up being a teacher": a state verb after "stopped"
# (other "stopped X-ing" are habits: rules_facts.retractions).
_STOPPED_STATE = re.compile(
    rf"{_I}(?:'ve| have)? (?:just |finally |recently )?(?:stopped|quit|gave up|given up) (being|working|living) "
    r"([a-z][^,.;!?]*)",
    re.I,
)
_GERUND = {"being": "am", "working": "work", "living": "live"}
# "I left Warsaw and moved to Berlin", "we packed up and moved to Seattle": one subject, two verbs.
_LEFT_MOVED = re.compile(
    rf"{_I}(?:'ve| have)? (?:just |finally )?(?:left (?P<old>[^,.;!?]+?)|packed up|sold (?:my|our) "
    r"(?:house|flat|apartment|place)) and (?:then |finally |just )?(?:moved|relocated) to (?P<new>[^,.;!?]+)",
    re.I,
)
# An object that only points back ("I used to love it"): what it was is not in the clause.
_PRONOUNS = {"it", "that", "this", "them", "those", "these", "me", "you", "him", "her"}


def split_change(clause: str) -> list[tuple[str, bool]]:
    """The clause as (part, says what holds now): "I used to live in Lyon, now I live in
    Paris" -> [("I used to live in Lyon", False), ("I live in Paris", True)]. Most clauses are
    one part, not new."""
    m = _NEW_PART.search(clause)
    ended = _ENDED.search(clause)
    if m is None and ended is not None:
        m = _BUT_PART.search(clause, ended.end())
    if m is None or not clause[: m.start()].strip():
        return [(clause, False)]
    return [(clause[: m.start()], False), (clause[m.end() :], True)]


Reader = Callable[[str, Collector], bool]


def past_state(s: str, c: Collector, readers: Sequence[Reader]) -> bool:
    """ "I used to live in Lyon", "I lived in Lyon until 2019" -> the retraction of "lives in
    Lyon": the old state is read by the ordinary rules (`readers`) from the same words said
    in the present ("I live in Lyon"), so it has the canonical text of the fact it closes;
    else it is the verb phrase itself."""
    m = _USED_TO.search(s)
    until = _UNTIL.search(s) if m is None else None
    stopped = _STOPPED_STATE.search(s) if m is None and until is None else None
    if stopped is not None:
        old = f"{_GERUND[stopped.group(1).lower()]} {clean_object(stopped.group(2), 8)}"
    elif until is not None:
        old = f"{_PRESENT[until.group('verb').lower()]} {clean_object(until.group('what'), 8)}"
    elif m is not None:
        old = _present(clean_object(m.group(1), 8))
    else:
        return False
    words = old.lower().split()
    if not words or (len(words) < 2 and words[0] in ("am", "be")) or words[-1] in _PRONOUNS:
        return False
    present = f"I {old}"
    probe = Collector(c.source, c.judge, c.cased)
    for read in readers:
        read(present, probe)
    got = [it for it in probe.items if it.kind in ("fact", "preference") and not it.retract]
    if got:
        for it in got:
            c.add(it.kind, it.text, it.importance, retract=True)
    else:
        c.add("fact", _third(old), 0.6, retract=True)
    return True


def _third(vp: str) -> str:
    """'am shy' / 'smoke' -> 'is shy' / 'smokes' (the first person present, third person)."""
    verb, _, rest = vp.partition(" ")
    return f"is {third_person(rest)}" if verb.lower() == "am" else verb_phrase_3rd(vp)


def switched(s: str, c: Collector) -> bool:
    """ "I switched from running to cycling", "I switched to tea instead of coffee": the new
    state ("switched to cycling") marked as a change, and the old one, when said, retracted."""
    m = _SWITCHED.search(s)
    if m is None:
        return False
    new = clean_object(m.group("new"), 6)
    if not new or new.split()[0].lower() in _PRONOUNS:
        return False
    old = m.group("old1") or m.group("old2")
    c.add("fact", f"switched to {third_person(new)}", 0.6, change=True)
    old = clean_object(old, 6) if old else ""
    if old and old.split()[0].lower() not in _PRONOUNS:
        c.add("fact", third_person(old), 0.6, retract=True)
    return True


def _present(vp: str) -> str:
    """'be a teacher' -> 'am a teacher' (the first person present of a bare verb phrase)."""
    verb, _, rest = vp.partition(" ")
    return f"am {rest}" if verb.lower() == "be" else vp


def left_and_moved(s: str, c: Collector) -> bool:
    """ "I left Warsaw and moved to Berlin": lives in Berlin (a change), no longer in Warsaw."""
    m = _LEFT_MOVED.search(s)
    if m is None:
        return False
    new = clean_object(m.group("new"), 5)
    if not new or new.split()[0].lower() in _PRONOUNS:
        return False
    c.add("fact", f"lives in {new}", 0.7, change=True)
    old = clean_object(m.group("old"), 5) if m.group("old") else ""
    if old and old.split()[0].lower() not in ("my", "our", "the", "a", *_PRONOUNS):
        c.add("fact", f"lives in {old}", 0.7, retract=True)
    return True
