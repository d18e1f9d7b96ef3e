"""Scoring a finished store against a scenario's gold annotations.

The matching rule (one rule for facts, updates and Level-2 answers):

    A text T states gold fact G when, after lower-casing and splitting T into word
    tokens, every key-word group of G has a stem that begins some token of T with at
    most 4 more letters ("teach" covers "teacher", "teaches", "teaching"; "librar" covers
    "librarian", "library"), and T's polarity equals G's: T is negative when it has a
    negation or aversion word (not, never, no longer, hate, dislike, used to, quit, ...
    or any "n't"), and only a dislike is a negative gold fact.

The key words are the slot value's content words, fixed in the bank (the job noun or its
verb's object, the city, the liked thing, the habit's object); the verb of the sentence
("works as", "enjoys") is not a key, so "is a nurse" and "works as a nurse" both count.
Facts are the users' current facts of every kind but `summary`. People are matched to
users by who was on camera (audio) or by the identity given (transcript); the words a
relation may use are listed per relation type (sister/sibling, colleague/coworker, ...).

- fact_recall: current gold facts stated by a current fact of one of the person's users;
- fact_precision: the person-mapped users' current facts that state a current gold fact
  of that person, a retraction of theirs ("no longer goes swimming"), or one of their
  relations in words (the other person's name and a word for the relation: "has a
  brother, Ben"); merely naming somebody earns nothing;
- false memories: facts on a person-mapped user that state nothing about that person (no
  gold fact of theirs, old or current, no relation of theirs): a fact on the wrong person
  is a false memory, even when somebody else said it; facts on other users that state
  nothing anybody said; relations between two people nobody related; and people nobody
  was or named (placeholders with an unsaid name, users seen nowhere).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from egomem.relations import inverse_relation, relation_terms
from egomem.schemas import Fact, FactKind, Relation, User
from egomem.store.base import MemoryStore
from egomem_eval.convo.bank import Keys
from egomem_eval.convo.scenario import GoldFact, GoldRelation, Scenario

NEGATIVE = frozenset(
    "not no never nobody nothing none hate hates hated dislike dislikes disliked detest detests detested "
    "longer anymore used former formerly previously quit quits stopped gave cannot".split()
)


def tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower().replace("’", "'"))


def is_negative(text: str) -> bool:
    return any(t in NEGATIVE or t.endswith("n't") for t in tokens(text))


def has_keys(text: str, keys: Keys) -> bool:
    toks = tokens(text)
    return all(any(t.startswith(s) and len(t) - len(s) <= 4 for s in group for t in toks) for group in keys)


def states(text: str, fact: GoldFact) -> bool:
    """The matching rule: `text` states gold `fact` (key words and polarity)."""
    return has_keys(text, fact.keys) and is_negative(text) == fact.negative


def names_in(text: str, names: Iterable[str]) -> bool:
    toks = set(tokens(text))
    return any(n.lower() in toks for n in names)


@dataclass
class Observation:
    """What the product did in one scenario, besides the store."""

    person_users: dict[str, set[str]]  # speaker -> user ids that stood for them
    day1_facts: dict[str, list[str]] = field(default_factory=dict)  # speaker -> current fact texts after day 1
    greetings: dict[str, list[str]] = field(default_factory=dict)  # speaker -> assistant lines of the day-2 visit
    answers: dict[str, str] = field(default_factory=dict)  # asker -> the answer to their Level-2 question
    cpu_s: list[float] = field(default_factory=list)  # per processed session
    wall_s: list[float] = field(default_factory=list)  # per processed session (transcript variant)


@dataclass
class Tally:
    """Numerators and denominators, summed over scenarios (micro averages)."""

    counts: dict[str, list[float]] = field(default_factory=dict)

    def add(self, key: str, hit: float, total: float = 1.0) -> None:
        c = self.counts.setdefault(key, [0.0, 0.0])
        c[0] += hit
        c[1] += total

    def merge(self, other: Tally) -> None:
        for k, (a, b) in other.counts.items():
            self.add(k, a, b)

    def ratio(self, key: str) -> float | None:
        a, b = self.counts.get(key, [0.0, 0.0])
        return a / b if b else None

    def total(self, key: str) -> float:
        return self.counts.get(key, [0.0, 0.0])[0]


def current_facts(store: MemoryStore, user_ids: Iterable[str]) -> list[Fact]:
    out = []
    for uid in user_ids:
        out += [f for f in store.list_facts(uid) if f.kind != FactKind.SUMMARY and f.is_current]
    return out


def score(sc: Scenario, store: MemoryStore, obs: Observation) -> Tally:
    users = {u.id: u for u in store.list_users()}
    person_users = {p: {u for u in ids if u in users} for p, ids in obs.person_users.items()}
    user_persons: dict[str, set[str]] = {}
    for p, ids in person_users.items():
        for u in ids:
            user_persons.setdefault(u, set()).add(p)
    t = Tally()
    t.add("scenarios", 1, 1)
    t.add("sessions", len(sc.sessions), 1)
    real = [u for u in users.values() if not u.placeholder]
    t.add("merges", sum(max(0, len(user_persons.get(u.id, ())) - 1) for u in real), 1)
    t.add("splits", sum(max(0, sum(not users[u].placeholder for u in ids) - 1) for ids in person_users.values()), 1)
    for person in sc.people:
        named = any((users[u].name or "").lower() == person.name.lower() for u in person_users.get(person.name, ()))
        t.add("name_recall", float(named))
    _facts(sc, store, person_users, user_persons, t)
    _relations(sc, store, users, user_persons, t)
    _updates(sc, store, person_users, obs, t)
    _people(sc, users, user_persons, t)
    for name in sc.names:
        t.add("greeting_by_name", float(any(names_in(x, [name]) for x in obs.greetings.get(name, []))))
    for q in sc.level2:
        answer = obs.answers.get(q.asker, "")
        t.add("level2_correct", float(states(answer, sc.fact(q.fact))))
    for s in obs.cpu_s:
        t.add("extract_cpu_s_per_session", s)
    return t


def _worded_relation(text: str, rel: GoldRelation) -> bool:
    """`text` states `rel` in words: the other person's name and a word for the relation."""
    toks = tokens(text)
    return names_in(text, [rel.obj]) and any(t.startswith(w) and len(t) - len(w) <= 2 for w in rel.words for t in toks)


def _supported(text: str, sc: Scenario, person: str) -> bool:
    """A current fact of `person` that is right about them (see the module docstring)."""
    for f in sc.facts_of(person, current=False):
        if (not f.retracted and states(text, f)) or (f.retracted and has_keys(text, f.keys) and is_negative(text)):
            return True
    return any(_worded_relation(text, r) for r in sc.relations if r.subject == person)


def _about(text: str, sc: Scenario, person: str) -> bool:
    """`text` says something `person` said about themselves, right or out of date."""
    if any(states(text, f) or (f.retracted and has_keys(text, f.keys)) for f in sc.facts_of(person, current=False)):
        return True
    return any(_worded_relation(text, r) for r in sc.relations if r.subject == person)


def _said_by_anyone(text: str, sc: Scenario) -> bool:
    return any(_about(text, sc, p.name) for p in sc.people)


def _facts(
    sc: Scenario, store: MemoryStore, person_users: dict[str, set[str]], user_persons: dict[str, set[str]], t: Tally
) -> None:
    for p in sc.people:
        stored = [f.text for f in current_facts(store, person_users.get(p.name, ()))]
        for g in sc.facts_of(p.name):
            t.add("fact_recall", float(any(states(x, g) for x in stored)))
    for uid, persons in user_persons.items():
        for f in current_facts(store, [uid]):
            t.add("fact_precision", float(any(_supported(f.text, sc, p) for p in persons)))
    for u in store.list_users():
        mapped = user_persons.get(u.id, set())
        for f in current_facts(store, [u.id]):
            # On a person's user, a fact about someone else is false, even when that someone said it.
            about = any(_about(f.text, sc, p) for p in mapped) if mapped else _said_by_anyone(f.text, sc)
            t.add("false_facts", float(not about), 0)


def _endpoint_names(
    uid: str | None, name: str | None, users: dict[str, User], user_persons: dict[str, set[str]]
) -> set[str]:
    out = {n.lower() for n in user_persons.get(uid or "", set())}
    if uid in users and users[uid].name:
        out.add((users[uid].name or "").lower())
    if name:
        out.add(name.lower())
    return out


def _relations(
    sc: Scenario, store: MemoryStore, users: dict[str, User], user_persons: dict[str, set[str]], t: Tally
) -> None:
    rels: dict[str, Relation] = {}
    for u in users:
        rels.update((r.id, r) for r in store.list_relations(u) if r.valid_to is None)
    ends = [
        (
            _endpoint_names(r.subject_id, None, users, user_persons),
            _endpoint_names(r.object_id, r.object_name, users, user_persons),
            r.relation.lower(),
        )
        for r in rels.values()
    ]
    # The product reads every edge backwards too (retrieval/social.py: B's question about
    # "my brother" finds A's "my sister B"), so an inverse gold relation is held when its
    # stored edge is, read through the product's own inverse table.
    backwards = [(o, s_, term) for s_, o, w in ends for term in relation_terms(inverse_relation(w))]
    for g in sc.relations:
        hit = any(g.subject.lower() in s and g.obj.lower() in o and w in g.words for s, o, w in ends)
        if g.inverse and not hit:
            hit = any(g.subject.lower() in s and g.obj.lower() in o and w in g.words for s, o, w in backwards)
        t.add("relation_recall", float(hit))
        if g.inverse:
            t.add("relation_recall_inverse", float(hit))
    related = {frozenset((g.subject.lower(), g.obj.lower())) for g in sc.relations}
    for s, o, _ in ends:
        ok = any(frozenset((a, b)) in related for a in s for b in o)
        t.add("false_relations", float(not ok), 0)


def _updates(sc: Scenario, store: MemoryStore, person_users: dict[str, set[str]], obs: Observation, t: Tally) -> None:
    for c in sc.changes:
        old = sc.fact(c.old)
        t.add("updates_total", 1, 1)
        if not any(states(x, old) for x in obs.day1_facts.get(c.person, [])):
            continue  # the old fact was never learned: nothing to update (counted by fact_recall)
        stored = [f.text for f in current_facts(store, person_users.get(c.person, ()))]
        closed = not any(states(x, old) for x in stored)
        added = c.new is None or any(states(x, sc.fact(c.new)) for x in stored)
        t.add("updates_applied", float(closed and added))


def _people(sc: Scenario, users: dict[str, User], user_persons: dict[str, set[str]], t: Tally) -> None:
    said = {n.lower() for n in (*sc.names, *sc.mentioned)}
    for u in users.values():
        if u.placeholder:
            false = (u.name or "").lower() not in said
        else:
            false = u.id not in user_persons and (u.name or "").lower() not in said
        t.add("false_people", float(false), 0)


def metrics(t: Tally) -> dict[str, float | None]:
    """The reported figures from a (summed) tally."""
    sessions = t.total("sessions")
    false = t.total("false_facts") + t.total("false_relations") + t.total("false_people")
    keys = ("name_recall", "fact_recall", "fact_precision", "relation_recall", "relation_recall_inverse",
            "updates_applied", "greeting_by_name", "level2_correct", "extract_cpu_s_per_session")  # fmt: skip
    out: dict[str, float | None] = {k: t.ratio(k) for k in keys}
    out["false_memories_per_session"] = false / sessions if sessions else None
    out["merges"] = t.total("merges")
    out["splits"] = t.total("splits")
    return out
