"""The relation lexicon: the words that name how two people are related.

A neutral module (it imports nothing of egomem) so that the memory extractor, the
social-graph linker and the dialog model's `<retr>` queries share one vocabulary
without the dialog layer importing memory.
"""

from __future__ import annotations

# One regex alternation, longest phrases first where one contains another ("best friend" before "friend").
REL_WORDS = (
    "best friend|friend|colleague|coworker|co-worker|boss|manager|sister|brother|mother|mom|mum|father|dad|son|"
    "daughter|wife|husband|boyfriend|girlfriend|partner|fiancé|fiancée|fiance|fiancee|cousin|aunt|uncle|"
    "grandmother|grandma|grandfather|grandpa|neighbor|neighbour|roommate|flatmate|mentor|niece|nephew|"
    "teammate|classmate|ex|sibling|grandson|granddaughter|grandchild|grandparent"
)

# Plural nouns and states ("we are colleagues", "we are married") -> the relation word each implies.
PLURAL_RELATIONS = {
    "friends": "friend",
    "colleagues": "colleague",
    "coworkers": "coworker",
    "neighbors": "neighbor",
    "neighbours": "neighbour",
    "roommates": "roommate",
    "cousins": "cousin",
    "siblings": "sibling",
    "brothers": "brother",
    "sisters": "sister",
    "partners": "partner",
    "classmates": "classmate",
    "teammates": "teammate",
    "married": "spouse",
    "dating": "partner",
    "engaged": "fiancé",
}

# A new word between the same two people replaces the old one within these groups
# ("friend" -> "boyfriend" -> "ex"); other words coexist ("colleague" and "friend").
EXCLUSIVE_RELATIONS = frozenset({
    "friend", "best friend", "boyfriend", "girlfriend", "partner", "spouse", "wife", "husband",
    "fiancé", "fiancée", "fiance", "fiancee", "ex",
})  # fmt: skip

# Reading an edge backwards. "Anna is my sister" (A -sister-> Anna) tells Anna that A is
# her brother or sister: which one depends on A's gender, which the word does not say.
# Each entry: relation word -> (inverse when the other's gender is unknown, if male, if female).
_FAMILY_INVERSE = {
    ("sister", "brother", "sibling"): ("sibling", "brother", "sister"),
    ("mother", "mom", "mum", "father", "dad", "parent"): ("child", "son", "daughter"),
    ("son", "daughter", "child", "kid"): ("parent", "father", "mother"),
    ("grandmother", "grandma", "grandfather", "grandpa", "grandparent"): ("grandchild", "grandson", "granddaughter"),
    ("grandson", "granddaughter", "grandchild"): ("grandparent", "grandfather", "grandmother"),
    ("aunt", "uncle"): ("niece or nephew", "nephew", "niece"),
    ("niece", "nephew"): ("aunt or uncle", "uncle", "aunt"),
    ("wife", "husband", "spouse"): ("spouse", "husband", "wife"),
    ("boyfriend", "girlfriend"): ("partner", "boyfriend", "girlfriend"),
    ("fiancé", "fiancée", "fiance", "fiancee"): ("fiancé", "fiancé", "fiancée"),
}
_PLAIN_INVERSE = {
    "boss": "employee", "manager": "employee", "employee": "boss", "mentor": "mentee", "mentee": "mentor",
}  # fmt: skip
# Words that say the gender of the person they name ("Anna is my sister": Anna is female).
GENDER_OF_WORD = {
    **dict.fromkeys(
        "sister mother mom mum daughter grandmother grandma granddaughter aunt niece wife girlfriend fiancée".split(),
        "female",
    ),
    **dict.fromkeys(
        "brother father dad son grandfather grandpa grandson uncle nephew husband boyfriend fiancé".split(), "male"
    ),
}
# The words a question may use for a relation stored under a neutral word, for matching.
ALTERNATIVES = {
    "sibling": ("sibling", "brother", "sister"),
    "child": ("child", "son", "daughter", "kid"),
    "parent": ("parent", "mother", "father", "mom", "dad", "mum"),
    "grandchild": ("grandchild", "grandson", "granddaughter"),
    "grandparent": ("grandparent", "grandmother", "grandfather", "grandma", "grandpa"),
    "spouse": ("spouse", "wife", "husband", "partner"),
    "partner": ("partner", "boyfriend", "girlfriend", "wife", "husband"),
    "niece or nephew": ("niece", "nephew"),
    "aunt or uncle": ("aunt", "uncle"),
    "employee": ("employee", "colleague", "coworker"),
    "boss": ("boss", "manager"),
}


def inverse_relation(word: str, gender: str | None = None) -> str:
    """The relation of B to A when A's relation to B is `word` ("sister" -> "sibling", or
    "brother" when A is known to be male). Symmetric words (friend, colleague, cousin,
    neighbour, partner, ex, ...) are their own inverse."""
    w = word.lower().strip()
    for words, (neutral, male, female) in _FAMILY_INVERSE.items():
        if w in words:
            return male if gender == "male" else female if gender == "female" else neutral
    return _PLAIN_INVERSE.get(w, w)


def relation_terms(word: str) -> tuple[str, ...]:
    """`word` and the words a question may use for it ("sibling" -> sibling, brother, sister)."""
    w = word.lower().strip()
    return ALTERNATIVES.get(w, (w,))


def is_relation_word(word: str) -> bool:
    """Whether `word` names a relation between people that the social graph knows
    (singular or plural, any case): "sister", "colleagues", "best friend"."""
    w = " ".join(word.lower().split())
    known = set(REL_WORDS.split("|")) | set(ALTERNATIVES) | set(GENDER_OF_WORD)
    return w in known or PLURAL_RELATIONS.get(w, w.removesuffix("s")) in known
