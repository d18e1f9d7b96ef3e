"""Shared pieces of the rule extractor: the item collector and the text helpers that turn
"I" sentences into the canonical third-person texts memory/slots.py understands."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from egomem.memory.items import ExtractedItem
from egomem.memory.names import NameJudge
from egomem.schemas import day_text

# Words that only say how much or how surely, never the verb ("I really love", "I'd also like to",
# "I just walk to work every day"), for the wish and the habit rules alike.
INTENSIFIERS = (
    r"(?:really|also|still|so|just|definitely|truly|honestly|totally|absolutely|eventually|actually|"
    r"finally|soon|badly|kind of|sort of)"
)
LIKING_VERBS = r"(?:like|love|enjoy|adore|prefer)"  # said in the present: "I love", not "I'd love"

_CUT = re.compile(
    r"\s+(?:because|cause|but|since|so that|so|when|while|which|who|and i|and we|and my|and it|and then|though|"
    r"although|if|until|unless|or)\b.*$|\s+[–—-]\s.*$",
    re.I,
)
_TRAIL = re.compile(
    r"\s+(?:a lot|so much|very much|too|as well|anymore|any more|now|lately|actually|recently|yesterday|today"
    r"|these days|nowadays|at the moment|right now|at all|last (?:week|month|year|weekend)|this (?:week|month|year))$",
    re.I,
)
FREQUENCY = (
    r"every (?:single )?(?:morning|day|evening|night|week|weekend|month|year|summer|winter|spring|autumn|fall|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day)|on (?:the )?weekends?|on (?:mon|tues|wednes|thurs|fri|satur|sun)days"
    r"|at weekends|(?:once|twice|three times) a (?:day|week|month|year)|each (?:morning|day|evening|week)"
)


@dataclass
class Collector:
    """Items of one user turn; every item quotes the turn (its provenance)."""

    source: str
    judge: NameJudge
    cased: bool
    items: list[ExtractedItem] = field(default_factory=list)

    def add(self, kind: str, text: str, importance: float, **extra: object) -> None:
        text = " ".join(text.split())
        if text:
            item = ExtractedItem.model_validate(
                {"kind": kind, "text": text, "source_text": self.source, "importance": importance, **extra}
            )
            self.items.append(item)


def clean_object(obj: str, max_words: int = 8) -> str:
    """The object of a statement without its trailing clause, adverbs and punctuation."""
    obj = _CUT.sub("", obj.strip().rstrip(".!?,;:"))
    for _ in range(2):
        obj = _TRAIL.sub("", obj).strip(" ,")
    return " ".join(obj.split()[:max_words])


def third_person(text: str) -> str:
    subs = [(r"\bmyself\b", "themselves"), (r"\bmy\b", "their"), (r"\bme\b", "them"), (r"\bmine\b", "theirs")]
    subs += [(r"\bI'm\b", "they're"), (r"\bI\b", "they"), (r"\bwe're\b", "they're"), (r"\bour\b", "their")]
    subs += [(r"\bourselves\b", "themselves"), (r"\bus\b", "them")]
    for pat, rep in subs:
        text = re.sub(pat, rep, text, flags=re.IGNORECASE)
    return text


_IRREGULAR = {"have": "has", "do": "does", "go": "goes", "am": "is", "be": "is", "'m": "is"}


def verb_3rd(verb: str) -> str:
    """'drink' -> 'drinks', 'go' -> 'goes', 'study' -> 'studies' (present tense, he/she)."""
    v = verb.lower()
    if v in _IRREGULAR:
        return _IRREGULAR[v]
    if re.search(r"(?:s|sh|ch|x|z|o)$", v):
        return v + "es"
    if re.search(r"[^aeiou]y$", v):
        return v[:-1] + "ies"
    return v + "s"


def verb_phrase_3rd(phrase: str) -> str:
    """'walk my dog' -> 'walks their dog' (the first word is the verb)."""
    verb, _, rest = phrase.strip().partition(" ")
    return f"{verb_3rd(verb)} {third_person(rest)}".strip()


def relative_dates(text: str, day: datetime) -> str:
    fmt = day_text
    table = [
        (r"\byesterday\b", f"on {fmt(day - timedelta(days=1))}"),
        (r"\btoday\b", f"on {fmt(day)}"),
        (r"\btonight\b", f"on the night of {fmt(day)}"),
        (r"\btomorrow\b", f"on {fmt(day + timedelta(days=1))}"),
        (r"\blast week\b", f"in the week before {fmt(day)}"),
        (r"\blast weekend\b", f"on the weekend before {fmt(day)}"),
        (r"\bnext week\b", f"in the week after {fmt(day)}"),
        (r"\blast month\b", f"in {(day.replace(day=1) - timedelta(days=1)):%B %Y}"),
        (r"\blast year\b", f"in {day.year - 1}"),
        *(
            (rf"\b(?:last|this past) {name}\b", f"on {fmt(day - timedelta(days=(day.weekday() - i - 1) % 7 + 1))}")
            for i, name in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))
        ),
        (r"\bthis year\b", f"in {day.year}"),
        (r"\bnext year\b", f"in {day.year + 1}"),
    ]
    for pat, rep in table:
        text = re.sub(pat, rep, text, flags=re.IGNORECASE)
    return text
