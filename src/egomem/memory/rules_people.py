"""Rules for people: the user's own name and the people they are related to.

Every candidate name goes through the NameJudge (memory/names.py): in cased text a
capitalised word that is not a common word; in lower-case ASR text a first name from the
lexicon or a name memory knows. "my" and "our" both speak for the user ("our daughter
Mia" is the user's daughter too).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from egomem.memory.names import title
from egomem.memory.rules_text import Collector
from egomem.relations import PLURAL_RELATIONS, REL_WORDS

_W = r"[A-Za-zÀ-ÿ][A-Za-zà-ÿ'-]*"
_WORD = rf"({_W})"
# A full name only when both words are capitalised ("Anna Smith"); else one word.
_TWO = rf"((?-i:[A-Z])[a-zà-ÿ'-]+ (?-i:[A-Z])[a-zà-ÿ'-]+|{_W})"
_MY = r"(?:my|our)"
_ADJ = r"(?:new |old |good |dear |best |little |big |older |younger |elder |baby |twin |oldest |youngest |only )?"
_REL = rf"({REL_WORDS})(?!'s|-)"  # "my colleague's husband" is not my colleague
_REL_OF = rf"({REL_WORDS})"
# After a weak introduction the clause must end: "I'm Anna." / "I'm Anna and ..." but not "I'm Anna's dad".
_END = r"(?=\s*$|\s*[,.!;:]|\s+(?:and|but|so|from|here|by the way|btw|speaking|nice|i|i'm|hi|hello)\b)"
_NOT_MY = rf"(?!\s*,?\s*{_MY}\b)"  # "This is Anna, my sister": introducing someone else
# The name one goes by besides one's own ("My name is Robert. Call me Bob."): the same person.
_NICKNAME = r"(?:call me|i go by|people call me|everyone calls me)"
_GREETING = r"^(?:(?:hi|hello|hey|good (?:morning|afternoon|evening)|oh|well|yes|yeah|ok|okay|so)[,!.]?\s+)*"


def _person(c: Collector, word: str, *, strong: bool, initial: bool = False) -> str | None:
    """`word` as a person's name, or None. A capital at the start of a sentence is no evidence."""
    first = word.split()[0]
    if not c.judge.accepts(first, cased=c.cased and not initial, strong=strong):
        return None
    return " ".join(title(w) for w in word.split())


@dataclass(frozen=True)
class Introduction:
    name: str
    kind: str  # "own": "my name is X", "I'm X", "X here"; "nickname": "call me X"; "this is": "this is X", "it's X"


def introduction(s: str, c: Collector) -> Introduction | None:
    """The name a sentence gives as the speaker's, from strong introductions ("my name is X", "call
    me X") or weak ones ("I'm X", "this is X", "X here", "it's X") that the judge must back."""
    # (pattern, strong context, capital letters count as evidence, kind)
    patterns = [
        # "The name is Ryan." introduces the speaker only where it opens the sentence.
        (rf"(?:\b(?:my name(?: is|'s)|name's)|{_GREETING}the name is)\s+{_TWO}{_END}", True, c.cased, "own"),
        (rf"\b{_NICKNAME}\s+{_TWO}{_END}", c.cased, c.cased, "nickname"),
        (rf"\b(?:i'm|i am)\s+{_TWO}{_END}", False, c.cased, "own"),
        # Sentence-initial introductions: "This is Anna" also introduces places and brands,
        # and "X here" starts a sentence, where a capital is no evidence: the lexicon decides.
        (
            rf"{_GREETING}(?:this is|it's|it is|it's me,?)\s+{_WORD}(?:\s+(?:here|speaking))?{_END}{_NOT_MY}",
            False,
            False,
            "this is",
        ),
        (rf"{_GREETING}{_WORD}\s+here(?=\s*$|\s*[,.!])", False, False, "own"),
    ]
    for pat, strong, cased, kind in patterns:
        m = re.search(pat, s, re.IGNORECASE)
        if m is None or not c.judge.accepts(m.group(1).split()[0], cased=cased, strong=strong):
            continue
        words = m.group(1).split() if cased else m.group(1).split()[:1]
        return Introduction(" ".join(title(w) for w in words), kind)
    return None


def user_name(s: str, c: Collector) -> bool:
    """The user's name, when the sentence gives one (`introduction`)."""
    intro = introduction(s, c)
    if intro is None:
        return False
    c.add("name", intro.name, 1.0)
    return True


def _relation(c: Collector, rel: str, person: str, *, user_is_subject: bool = True, retract: bool = False) -> None:
    rel = rel.lower()
    a = "an" if rel[:1] in "aeiou" else "a"
    text = f"has {a} {rel} named {person}" if user_is_subject else f"is {person}'s {rel}"
    c.add("relation", text, 0.8, relation=rel, person=person, user_is_subject=user_is_subject, retract=retract)


def relations(s: str, c: Collector) -> bool:
    """Named relatives, friends and colleagues, in every common word order."""
    found = False
    weak = [
        rf"\b{_TWO} is {_MY} {_ADJ}{_REL}\b",  # "John is my colleague"
        rf"\b{_TWO}'s {_MY} {_ADJ}{_REL}\b",  # "Mia's my sister" ('s = is: "Mia's sister" has no "my")
        rf"\b{_MY} {_ADJ}{_REL},? {_TWO}\b",  # "my sister Anna", "our daughter, Mia"
        rf"\b{_TWO}, {_MY} {_ADJ}{_REL}\b",  # "Anna, my sister, ..."
        rf"\b{_TWO}[?.!,]?\s+(?:she|he)(?:'s| is) {_MY} {_ADJ}{_REL}\b",  # "I know Emily. She's my colleague."
    ]
    # "My sister is Maria." -- but "my sister is Italian": only names the lexicon knows
    # (the match is treated as sentence-initial, where a capital letter is no evidence).
    lexicon_only = [rf"\b{_MY} {_ADJ}{_REL} is {_TWO}{_END}"]
    strong = [
        rf"\b(?:a|an|one|{_MY}) {_ADJ}{_REL} (?:named|called) {_TWO}",  # "a son named Leo"
        rf"\b{_MY} {_ADJ}{_REL_OF}(?:'s name is| is called| is named| goes by) {_TWO}",  # "my son is called Leo"
    ]
    for m in re.finditer(lexicon_only[0], s, re.IGNORECASE):
        if person := _person(c, m.group(2), strong=False, initial=True):
            _relation(c, m.group(1), person)
            found = True
    for patterns, strength in ((weak, False), (strong, True)):
        for pat in patterns:
            for m in re.finditer(pat, s, re.IGNORECASE):
                if strength and not _users_own(s[: m.start()], m.group(0)):
                    continue  # "my friend has a son named Leo": Leo is not the user's son
                rel_first = re.fullmatch(REL_WORDS, m.group(1), re.IGNORECASE) is not None
                rel, word = (m.group(1), m.group(2)) if rel_first else (m.group(2), m.group(1))
                initial = not rel_first and not s[: m.start(1)].strip(" '\"")
                person = _person(c, word, strong=strength, initial=initial)
                if person is not None:
                    _relation(c, rel, person)
                    found = True
    return _special_relations(s, c) or found


def _users_own(prefix: str, match: str) -> bool:
    """Whether "a son named Leo" is the user's: said after "I have" / "we've got", or as "my/our ..."."""
    if re.match(r"(?:my|our)\b", match, re.IGNORECASE):
        return True
    has = re.search(r"\b(?:i|we)(?:'ve| have| had| got|'ve got| have got| just had)\b", prefix, re.IGNORECASE)
    return has is not None and re.search(r"\b(?:has|he|she|they)\b", prefix[has.end() :], re.IGNORECASE) is None


def _special_relations(s: str, c: Collector) -> bool:
    found = False
    # The inverse form: "I'm Tom's brother" is stored as said (Tom -brother-> the user, which
    # keeps the user's own gender); the graph reads it backwards with relations.inverse_relation
    # (Tom is the user's sibling: Tom's own gender is not said).
    m = re.search(rf"\b(?:I'm|I am)(?: now)? {_TWO}'s (?:new |older |younger |big |little |twin )?{_REL}\b", s, re.I)
    if m and (person := _person(c, m.group(1), strong=False)):
        _relation(c, m.group(2), person, user_is_subject=False)
        found = True
    # "Tom and I are siblings", "me and Tom are best friends", "Anna and I have been friends for years".
    m = re.search(
        rf"\b(?:{_TWO} and (?:I|me)|me and {_TWO}) (?:are|'re|have been|'ve been|became|got) (?:now )?(?:also )?"
        r"(best |good |old |close )?(\w+)",
        s,
        re.IGNORECASE,
    )
    word = m.group(4).lower() if m else ""
    if m and word in PLURAL_RELATIONS and (person := _person(c, m.group(1) or m.group(2), strong=False)):
        rel = PLURAL_RELATIONS[word]
        _relation(c, "best friend" if rel == "friend" and (m.group(3) or "").lower().strip() == "best" else rel, person)
        found = True
    # "Tessa and I grew up together, she is my sister": the pronoun names the person just said.
    m = (
        None
        if found
        else re.search(rf"\b{_TWO} and (?:I|me)\b[^.;!?]*?,\s*(?:she|he)(?:'s| is) (?:also )?my {_REL}", s)
    )
    if m and (person := _person(c, m.group(1), strong=False)):
        _relation(c, m.group(2), person)
        found = True
    m = re.search(rf"\b(?:I'm|I am|we're|we are) (?:now )?(married to|dating|engaged to) {_TWO}", s, re.I)
    if m and (person := _person(c, m.group(2), strong=False)):
        _relation(c, {"married to": "spouse", "dating": "partner", "engaged to": "fiancé"}[m.group(1).lower()], person)
        found = True
    m = re.search(rf"\b{_TWO} lives next door(?: to (?:me|us))?{_END}", s, re.IGNORECASE)
    if m and (person := _person(c, m.group(1), strong=False, initial=not s[: m.start()].strip())):
        _relation(c, "neighbour", person)
        found = True
    if not found:
        m = re.search(rf"\bI (?:also )?work (?:together )?with {_TWO}{_END}", s, re.IGNORECASE)
        if m and (person := _person(c, m.group(1), strong=False)):
            _relation(c, "colleague", person)
            found = True
    # Endings: "Anna is no longer my girlfriend", "Tom isn't my boss anymore".
    m = re.search(rf"\b{_TWO} (?:is no longer|isn't|is not) {_MY} {_REL}", s, re.IGNORECASE)
    if m and re.search(r"\b(?:no longer|any ?more)\b", s, re.I) and (person := _person(c, m.group(1), strong=False)):
        _relation(c, m.group(2), person, retract=True)
        found = True
    return found
