"""Is this word someone's name? The rule extractor's one judge, built to be sound.

A wrong name is a false memory that also names a person, so the judge says yes only
on evidence:
- cased text (Whisper writes names capitalised): a capitalised word that is not a common
  word, a nationality, a faith or a fictional character;
- lower-case text (pocketsphinx, or a cased model that lost the case): a word in the
  first-name lexicon (first_names.txt: the US Census 1990 lists minus ordinary English
  words, plus common names from elsewhere; see scripts/make_first_names.py) or a name
  memory already knows.
The patterns decide how strong the context is ("my name is X" is strong, "I'm X" is
weak); see `NameJudge.accepts`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from egomem.memory.items import SessionText

# Never names, whatever their case: what follows "I'm", "this is" or "my sister" in speech.
COMMON = frozenset(
    """
    you your yours he him his she her hers they them their it its we us our someone somebody anyone nobody everyone
    so not just really very glad happy sorry sure fine good great okay ok here there back home going trying thinking
    doing feeling still also always actually tired busy excited afraid from at in a an the and but on working looking
    planning totally finally now too like well all into me it that this his her their new off out by with for to of
    is was are were be been being has had have who what which where when why how said says told asked likes loves
    hates lives works went goes got gets did does do can could will would should must may might shall name named
    called one two three four five six seven eight nine ten someone somebody nobody everyone everybody anyone
    something nothing everything here hi hello hey yes no yeah nope oh um uh hmm mm well right left same over
    sad mad angry bored hungry sick ill late early free ready done alright awesome cool nice lucky single married
    divorced pregnant retired unemployed vegan vegetarian allergic sorry honest serious kidding joking
    monday tuesday wednesday thursday friday saturday sunday january february march april june july august
    september october november december today tomorrow yesterday tonight morning evening night weekend
    later sometime anytime whatever anything crazy silly please again maybe
    mom mum dad mother father sister brother son daughter wife husband boss friend sir madam miss mister
    god lord doctor dr mr mrs ms prof professor
    """.split()
)
# "I'm French", "I'm Catholic": proper adjectives are capitalised but are not names.
NATIONALITIES = frozenset(
    """
    english british french german dutch swiss greek thai irish welsh scottish polish danish swedish finnish
    spanish italian portuguese russian chinese japanese korean vietnamese indian pakistani israeli iraqi iranian
    turkish arab arabic african american canadian mexican brazilian argentinian australian european asian
    jewish muslim catholic christian hindu sikh buddhist protestant mormon atheist agnostic democrat republican
    gay lesbian straight bi trans
    """.split()
)
_ADJ_SUFFIX = re.compile(r"(?:ish|ese|ian|can|ic|ist|ite)$")
# Jokes and film lines: "I'm Batman", "I am Groot", "I'm Santa".
FICTIONAL = frozenset(
    """
    batman superman spiderman spider-man ironman groot santa dracula frankenstein hulk thor yoda vader gandalf
    sherlock zorro tarzan rambo terminator bond elvis shakespeare einstein napoleon cleopatra jesus buddha
    """.split()
)


@cache
def lexicon() -> frozenset[str]:
    text = resources.files("egomem.memory").joinpath("first_names.txt").read_text(encoding="utf-8")
    return frozenset(ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#"))


def is_cased(text: str) -> bool:
    """Whether `text` came from a recogniser that writes case and punctuation (Whisper,
    a typed transcript), so a capital letter is evidence of a name. Lower-case ASR has
    neither; after truecasing it has only a first capital, "I" and known names."""
    if re.search(r"[.?!,;:]", text):
        return True
    words = re.findall(r"[A-Za-zÀ-ÿ'-]+", text)
    return sum(1 for w in words[1:] if w[:1].isupper() and not w.startswith("I'") and w != "I") >= 2


class NameJudge:
    """Judges name candidates for one session: knows memory's names and the text's casing."""

    def __init__(self, known: Iterable[str] = ()) -> None:
        self.known = {n.lower() for n in known if n and n.strip()}

    @classmethod
    def of_session(cls, session: SessionText) -> NameJudge:
        """The judge of one session: the names memory knows and the user's own, if known."""
        return cls([*session.known_names, *([session.user_name] if session.user_name else [])])

    def is_known(self, word: str) -> bool:
        return word.lower() in self.known

    def accepts(self, word: str, *, cased: bool, strong: bool) -> bool:
        """`strong`: the context says a name follows ("my name is", "call me"); weak
        contexts ("I'm", "this is", "... here", "my sister ...") need more evidence."""
        w = word.strip(".,!?;:'\"")
        low = w.lower()
        if len(w) < 2 or not re.fullmatch(r"[A-Za-zÀ-ÿ][A-Za-zÀ-ÿ'-]*", w) or low.endswith("'s"):
            return False
        if low in COMMON or low in FICTIONAL or low in NATIONALITIES:
            return False
        if low in self.known or low in lexicon():
            return True
        if not cased:
            # Lower-case text: only the lexicon and memory's names are evidence, except after
            # "my name is" (the caller makes sure the clause ends there).
            return strong
        if not w[:1].isupper() or w.isupper():
            return False
        return strong or not _ADJ_SUFFIX.search(low)


def title(name: str) -> str:
    """'anna-lena' -> 'Anna-Lena', keeping an inner capital ('McDonald')."""
    return "-".join(p[:1].upper() + p[1:] for p in name.split("-"))
