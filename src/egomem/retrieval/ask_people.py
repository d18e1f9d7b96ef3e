"""Who a question is about: people it names, people it implies through the social graph.

"Anna" is a user of that name (full name, or a first name only one person has). "my
sister" is, for the asking user, whoever the social graph says is their sister (an
incoming edge read backwards counts, as in Level-2 retrieval: `social.candidates_for`).
"Anna's brother" is read through Anna's own edges. "I/me/my" is the asking user.
Capitalised words that name nobody are kept as `unknown`: when nothing in memory mentions
them either, the answer is "I have nothing about ...".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from egomem.relations import PLURAL_RELATIONS, REL_WORDS, relation_terms
from egomem.retrieval.ask_types import PersonRef
from egomem.retrieval.social import Candidate, candidates_for
from egomem.retrieval.timex import MONTHS, WEEKDAYS
from egomem.schemas import User
from egomem.store.base import MemoryStore

_REL = f"{REL_WORDS}|{'|'.join(PLURAL_RELATIONS)}|parents|children|kids|siblings"
_MY_REL = re.compile(rf"\b(?P<my>my|our)\s+(?P<rel>{_REL})\b", re.IGNORECASE)
_POSS_REL = re.compile(rf"\b(?P<owner>[A-Z][\w-]+)'s\s+(?P<rel>{_REL})\b")
_SELF = re.compile(r"\b(?:I|me|my|mine|myself)\b")
_CAPITAL = re.compile(r"\b[A-Z][a-z][\w-]*\b")
_NOT_NAMES = frozenset(
    {"i", "what", "when", "where", "who", "whom", "why", "how", "which", "did", "does", "do", "is", "are", "was"}
    | {"were", "has", "have", "had", "can", "could", "would", "will", "should", "tell", "the", "a", "an", "and"}
    | {"my", "our", "your", "his", "her", "their", "in", "on", "at", "before", "after", "since", "last", "next"}
    | {"yesterday", "today", "tomorrow", "mr", "mrs", "ms", "dr"}
    | set(MONTHS)
    | set(WEEKDAYS)
)


@dataclass
class People:
    found: list[PersonRef] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)  # capitalised words naming nobody in memory
    missing: list[str] = field(default_factory=list)  # relation phrases the graph cannot resolve ("your sister")
    notes: list[str] = field(default_factory=list)

    @property
    def others(self) -> list[PersonRef]:
        """The people found other than the asking user."""
        return [p for p in self.found if p.relation != "self"]

    @property
    def ids(self) -> list[str]:
        return list(dict.fromkeys(p.user_id for p in self.found if p.user_id))


def _singular(word: str) -> str:
    w = word.lower()
    return PLURAL_RELATIONS.get(w, w[:-3] + "d" if w == "children" else w.removesuffix("s"))


def _related(cands: list[Candidate], word: str) -> list[Candidate]:
    w = _singular(word)
    return [c for c in cands if w == c.relation.lower() or w in relation_terms(c.relation)]


def _by_name(users: list[User]) -> dict[str, list[User]]:
    """Lower-cased full names and first names -> the users they can mean."""
    out: dict[str, list[User]] = {}
    for u in users:
        if not u.name:
            continue
        full = " ".join(u.name.split()).lower()
        out.setdefault(full, []).append(u)
        first = full.split()[0]
        if first != full:
            out.setdefault(first, []).append(u)
    return out


def resolve_people(store: MemoryStore, question: str, user_id: str | None) -> People:
    people = People()
    users = store.list_users()
    names = _by_name(users)
    seen: set[str] = set()

    def add(ref: PersonRef) -> None:
        key = ref.user_id or f"name:{ref.name}"
        if key not in seen:
            seen.add(key)
            people.found.append(ref)

    covered: list[tuple[int, int]] = []
    for m in _MY_REL.finditer(question):
        covered.append(m.span())
        said = f"your {m.group('rel').lower()}"
        if user_id is None:
            people.missing.append(said)
            people.notes.append(f"'{m.group(0)}' needs the asking user (--user) to be resolved")
            continue
        hits = _related(candidates_for(store, user_id), m.group("rel"))
        if not hits:
            people.missing.append(said)
        for c in {(c.person_id, c.person): c for c in hits}.values():
            add(PersonRef(mention=m.group(0), user_id=c.person_id, name=c.person, relation=c.relation))
    for m in _POSS_REL.finditer(question):
        owners = [u for u in names.get(m.group("owner").lower(), []) if u.id]
        if len(owners) != 1:
            continue
        # The owner stays a named person (not covered): "Caroline's grandma" is about Caroline too.
        hits = _related(candidates_for(store, owners[0].id), m.group("rel"))
        if not hits:
            people.notes.append(f"the social graph holds no {m.group('rel').lower()} of {owners[0].name}")
        for c in hits:
            add(PersonRef(mention=m.group(0), user_id=c.person_id, name=c.person, relation=c.relation))
    lowered = question.lower()
    for key in sorted(names, key=len, reverse=True):
        hit = re.search(rf"\b{re.escape(key)}\b", lowered)
        if hit is None or any(a <= hit.start() < b for a, b in covered):
            continue
        matches = names[key]
        if len(matches) > 1 and " " not in key:
            people.notes.append(f"'{key}' could be {len(matches)} people; searched them all")
        for u in matches:
            add(PersonRef(mention=question[hit.start() : hit.end()], user_id=u.id, name=u.name))
        covered.append(hit.span())
    rest = "".join(ch if not any(a <= i < b for a, b in covered) else " " for i, ch in enumerate(question))
    if user_id is not None and _SELF.search(rest):
        me = store.get_user(user_id)
        add(PersonRef(mention="I", user_id=user_id, name=me.name, relation="self"))
    for m in _CAPITAL.finditer(question):
        word = m.group(0)
        if m.start() == 0 or word.lower() in _NOT_NAMES or any(a <= m.start() < b for a, b in covered):
            continue
        if word.lower() not in names:
            people.unknown.append(word)
    people.unknown = list(dict.fromkeys(people.unknown))
    return people


def search_text(question: str, people: People) -> str:
    """The question with relation phrases replaced by the names they resolved to
    ("what does my sister like?" -> "what does Anna like?"), so search matches the name."""
    out = question
    for ref in people.found:
        if ref.name and ref.relation and ref.relation != "self" and ref.mention in out:
            out = out.replace(ref.mention, ref.name, 1)
    return out
