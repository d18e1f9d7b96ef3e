"""Slots of a fact text: which facts compete for the same place in a profile.

"lives in Lyon" and "lives in Paris" share the exclusive slot `residence`, so the newer
supersedes the older; "likes coffee" and "dislikes coffee" share `pref:coffee`; two
allergies do not compete. Works on the rule extractor's canonical texts and on free LLM
texts that start the same way (an optional leading subject name is skipped).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Slot:
    key: str
    value: str
    exclusive: bool  # one current value at a time


_SUBJECT = r"^(?:[A-Z][\w'-]*\s+)?"  # "Caroline lives in ..." or "lives in ..."
_PATTERNS: list[tuple[str, str, bool]] = [
    (r"(?:lives|is living|now lives) in (?P<v>.+)", "residence", True),
    (r"(?:moved|has moved|relocated) to (?P<v>.+)", "residence", True),
    (r"is from (?P<v>.+)", "origin", True),
    (r"works as (?:an? )?(?P<v>.+)", "job", True),
    (r"is (?P<v>retired|unemployed)", "job", True),
    (r"(?:works|is working) (?:at|for) (?P<v>.+)", "workplace", True),
    (r"(?:birthday is|was born on) (?P<v>.+)", "birthday", True),
    (r"is (?P<v>\d{1,3}) years old", "age", True),
    (r"favou?rite (?P<f>[\w ]+?) is (?P<v>.+)", "fav", True),
    (r"is allergic to (?P<v>.+)", "allergy", False),
    (r"has an? (?P<f>[\w]+) (?:named|called) (?P<v>.+)", "pet", False),
    (r"(?:dislikes|hates|does not like|doesn't like|can't stand) (?P<v>.+)", "pref-", True),
    (r"(?:likes|loves|enjoys|prefers|adores) (?P<v>.+)", "pref+", True),
]
_COMPILED = [(re.compile(_SUBJECT + p, re.IGNORECASE), k, e) for p, k, e in _PATTERNS]


def norm_value(v: str) -> str:
    v = re.sub(r"[.!?,;]+$", "", v.strip().lower())
    v = re.sub(r"^(?:the|a|an|my|their|his|her) ", "", v)
    return " ".join(v.split())


def slot_of(text: str) -> Slot | None:
    """The slot of a fact text, or None when the text fits no known slot."""
    for rx, key, exclusive in _COMPILED:
        m = rx.match(text.strip())
        if not m:
            continue
        value = norm_value(m.group("v"))
        if key in ("pref+", "pref-"):
            # Polarity is the value; the object names the slot, so like/dislike compete.
            return Slot(f"pref:{value}", key[-1], exclusive)
        if key == "fav":
            return Slot(f"fav:{norm_value(m.group('f'))}", value, exclusive)
        if key in ("allergy",):
            return Slot(f"allergy:{value}", value, exclusive)
        if key == "pet":
            return Slot(f"pet:{norm_value(m.group('f'))}:{value}", value, exclusive)
        return Slot(key, value, exclusive)
    return None
