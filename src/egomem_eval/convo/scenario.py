"""A seeded two-day scenario with 2-3 people, and what a perfect memory would hold after it.

Day 1: each person, one at a time, introduces themself and says facts about themself
(job, home, a named relative, likes, a strong dislike, a habit), how they relate to the
other people, and things that must not become memories (small talk, a question, a
question naming someone, a joke). Day 2: each returns without saying their name, states
one change (new job, a move, a dropped like or habit) and asks a Level-2 question about
a related person.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from egomem_eval.convo.bank import CITIES, FAMILY, JOBS, LIKES, Keys, Person, draw_name, draw_person, overlap
from egomem_eval.convo.templates import Template, templates

REL_TYPES = ("sibling", "colleague", "friend", "neighbour", "partner", "cousin")
_SIBLING = {"f": "sister", "m": "brother"}
_PARTNER = {"f": "wife", "m": "husband"}
_FAMILY_WORDS = {
    "son": {"son", "child"},
    "daughter": {"daughter", "child"},
    "sister": {"sister", "sibling"},
    "brother": {"brother", "sibling"},
    "mother": {"mother", "mom", "mum", "parent"},
    "father": {"father", "dad", "parent"},
}


@dataclass(frozen=True)
class Utterance:
    text: str
    template: str  # template id
    kind: str


@dataclass
class Session:
    day: int
    person: str
    turns: list[Utterance]


@dataclass
class GoldFact:
    id: str
    person: str
    kind: str  # job | home | like | dislike | habit
    text: str  # canonical third person, for reports
    keys: Keys
    negative: bool = False  # a dislike: the stored fact must say so
    day: int = 1
    retracted: bool = False  # no longer holds after day 2


@dataclass(frozen=True)
class GoldRelation:
    subject: str  # speaker whose edge it is
    obj: str  # the other person's name
    words: frozenset[str]  # relation words that count ("sister", "sibling")
    inverse: bool  # read backwards from what was said
    obj_met: bool  # the other person is a speaker of the scenario


@dataclass(frozen=True)
class GoldChange:
    person: str
    old: str  # GoldFact id that must be closed
    new: str | None  # GoldFact id that must be current


@dataclass(frozen=True)
class Level2:
    asker: str
    about: str
    fact: str  # GoldFact id the answer must state


@dataclass
class Scenario:
    split: str
    seed: int
    people: list[Person]
    sessions: list[Session] = field(default_factory=list)
    facts: list[GoldFact] = field(default_factory=list)
    relations: list[GoldRelation] = field(default_factory=list)
    changes: list[GoldChange] = field(default_factory=list)
    level2: list[Level2] = field(default_factory=list)
    mentioned: list[str] = field(default_factory=list)  # names of relatives (not met)

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.people]

    def fact(self, fid: str) -> GoldFact:
        return next(f for f in self.facts if f.id == fid)

    def facts_of(self, person: str, *, current: bool = True) -> list[GoldFact]:
        return [f for f in self.facts if f.person == person and not (current and f.retracted)]


def generate(split: str, seed: int, n_people: int | None = None) -> Scenario:
    """The scenario `seed` of `split` ("dev" or "test"); same arguments, same scenario."""
    if split not in ("dev", "test"):
        raise ValueError(f"split must be dev or test, got {split!r}")
    rng = random.Random(f"{split}:{seed}")
    taken: set[str] = set()
    people = [draw_person(rng, taken) for _ in range(n_people or rng.choice((2, 3)))]
    sc = Scenario(split, seed, people, mentioned=[n for p in people for _, n in p.relatives])
    # The question's topic shares no key word with any gold fact (nor with a new job on day 2).
    keys = [t.keys for p in people for t in (*p.likes, *p.dislikes)]
    keys += [p.job.keys for p in people] + [h.keys for p in people for h, _ in p.habits]
    q_like = rng.choice([t for t in LIKES if not overlap(t.keys, keys)])
    q_name = draw_name(rng, taken, rng.choice("fm"))
    pairs = [(people[i], people[i + 1]) for i in range(len(people) - 1)]
    links = [(a, b, rng.choice(REL_TYPES), rng.random() < 0.5) for a, b in pairs]  # (a, b, type, a states it)
    b = _Builder(sc, rng, split, q_like.keys)
    for p in people:
        _facts_day1(sc, p)
    for p in people:
        b.day1(p, links, q_like.text, q_name)
    changes = [b.change(p) for p in people]  # all changes first: no question asks about a changed fact
    for p, said in zip(people, changes, strict=True):
        b.day2(p, links, said)
    return sc


def rel_word(kind: str, other_gender: str) -> str:
    """What one calls the other person in a relation of this type."""
    if kind == "sibling":
        return _SIBLING[other_gender]
    if kind == "partner":
        return _PARTNER[other_gender]
    return kind


def rel_words(kind: str, other_gender: str) -> frozenset[str]:
    """Every word that states this relation correctly (the scorer's accepted set)."""
    extra = {
        "sibling": {"sibling"},
        "partner": {"partner", "spouse"},
        "colleague": {"coworker", "co-worker"},
        "friend": {"best friend"},
        "neighbour": {"neighbor"},
    }.get(kind, set())
    return frozenset({rel_word(kind, other_gender), *extra})


def _facts_day1(sc: Scenario, p: Person) -> None:
    def add(kind: str, text: str, keys: Keys, negative: bool = False) -> None:
        sc.facts.append(GoldFact(f"{p.name}.{kind}.{len(sc.facts)}", p.name, kind, text, keys, negative))

    add("job", f"works as {p.job.noun}", p.job.keys)
    add("home", f"lives in {p.home}", ((p.home.lower(),),))
    for like in p.likes:
        add("like", f"likes {like.text}", like.keys)
    for dis in p.dislikes:
        add("dislike", f"dislikes {dis.text}", dis.keys, negative=True)
    for habit, when in p.habits:
        add("habit", f"{habit.third} {when}", habit.keys)
    for word, name in p.relatives:
        sc.relations.append(GoldRelation(p.name, name, frozenset(_FAMILY_WORDS[word]), False, False))


class _Builder:
    def __init__(self, sc: Scenario, rng: random.Random, split: str, avoid: Keys) -> None:
        self.sc, self.rng, self.split, self.avoid = sc, rng, split, avoid

    def say(self, kind: str, **slots: str) -> Utterance:
        t: Template = self.rng.choice(templates(self.split, kind))
        filled = t.text.format_map(_Slots(slots))
        return Utterance(filled[0].upper() + filled[1:], t.id, kind)

    def day1(self, p: Person, links: list[tuple[Person, Person, str, bool]], q_like: str, q_name: str) -> None:
        rng = self.rng
        job = (
            self.say("job_verb", jobv=p.job.verb)
            if p.job.verb and rng.random() < 0.5
            else self.say("job_noun", job=p.job.noun)
        )
        middle = [job, self.say("home", city=p.home)]
        for word, name in p.relatives:
            middle.append(self.say("family", rel=word, rname=name, pos="his" if FAMILY[word] == "m" else "her"))
        for a, b, kind, a_states in links:
            if (a is p and a_states) or (b is p and not a_states):
                other = b if a is p else a
                middle.append(self._relation(kind, other))
                self._gold_relation(p, other, kind)
        middle += [self.say("like", like=x.text) for x in p.likes]
        middle += [self.say("dislike", dislike=x.text) for x in p.dislikes]
        middle += [self.say("habit", habit=h.base, when=w) for h, w in p.habits]
        tricky = rng.choice(("question", "question_person", "joke"))
        middle += [self.say(tricky, qlike=q_like, qname=q_name), self.say("smalltalk")]
        rng.shuffle(middle)
        self.sc.sessions.append(Session(1, p.name, [self.say("intro", name=p.name), *middle]))

    def day2(self, p: Person, links: list[tuple[Person, Person, str, bool]], change: Utterance) -> None:
        rng = self.rng
        turns = [self.say("greet_again"), change]
        related = [(b if a is p else a, kind) for a, b, kind, _ in links if p in (a, b)]
        if related:
            other, kind = rng.choice(related)
            turns.append(self._ask(p, other, kind))
        turns.append(self.say(rng.choice(("smalltalk", "smalltalk", "joke"))))
        self.sc.sessions.append(Session(2, p.name, turns))

    def _relation(self, kind: str, other: Person) -> Utterance:
        specific = f"relation_{kind}"
        use = specific if kind != "cousin" and self.rng.random() < 0.5 else "relation"
        pron = "she" if other.gender == "f" else "he"
        return self.say(use, other=other.name, rel=rel_word(kind, other.gender), pron=pron, Pron=pron.capitalize())

    def _gold_relation(self, speaker: Person, other: Person, kind: str) -> None:
        rels = self.sc.relations
        rels.append(GoldRelation(speaker.name, other.name, rel_words(kind, other.gender), False, True))
        rels.append(GoldRelation(other.name, speaker.name, rel_words(kind, speaker.gender), True, True))

    def change(self, p: Person) -> Utterance:
        sc, rng = self.sc, self.rng
        old = {f.kind: f for f in sc.facts_of(p.name)}
        kind = rng.choice(("change_job", "move", "retract_like", "retract_habit"))
        if kind == "change_job":
            p.new_job = rng.choice([j for j in JOBS if j != p.job and not overlap(j.keys, [self.avoid])])
            new = self._replace(old["job"], "job", f"works as {p.new_job.noun}", p.new_job.keys)
            return self._changed(p, old["job"], new, self.say(kind, job=p.job.noun, job2=p.new_job.noun))
        if kind == "move":
            p.new_home = rng.choice([c for c in CITIES if c != p.home])
            new = self._replace(old["home"], "home", f"lives in {p.new_home}", ((p.new_home.lower(),),))
            return self._changed(p, old["home"], new, self.say(kind, city=p.home, city2=p.new_home))
        if kind == "retract_like":
            like = next(f for f in sc.facts_of(p.name) if f.kind == "like")
            return self._changed(p, like, None, self.say(kind, like=p.likes[0].text))
        habit, _ = p.habits[0]
        return self._changed(p, old["habit"], None, self.say(kind, habit=habit.base, habit_ing=habit.ing))

    def _replace(self, old: GoldFact, kind: str, text: str, keys: Keys) -> GoldFact:
        new = GoldFact(f"{old.person}.{kind}.{len(self.sc.facts)}", old.person, kind, text, keys, day=2)
        self.sc.facts.append(new)
        return new

    def _changed(self, p: Person, old: GoldFact, new: GoldFact | None, said: Utterance) -> Utterance:
        old.retracted = True
        self.sc.changes.append(GoldChange(p.name, old.id, new.id if new else None))
        return said

    def _ask(self, asker: Person, other: Person, kind: str) -> Utterance:
        facts = [f for f in self.sc.facts_of(other.name) if f.kind in ("like", "habit", "home", "job") and f.day == 1]
        changed = {c.old for c in self.sc.changes}
        fact = self.rng.choice([f for f in facts if f.id not in changed] or facts)
        rel = rel_word(kind, other.gender)
        self.sc.level2.append(Level2(asker.name, other.name, fact.id))
        if fact.kind == "like":
            like = next(x.text for x in other.likes if f"likes {x.text}" == fact.text)
            return self.say("ask_like", rel=rel, like=like)
        if fact.kind == "habit":
            habit = other.habits[0][0]
            return self.say("ask_habit", rel=rel, habit=habit.base.replace(" my ", " their "), habit3=habit.third)
        if fact.kind == "home":
            return self.say("ask_home", rel=rel, city=other.home)
        return self.say("ask_job", rel=rel)


class _Slots(dict[str, str]):
    def __missing__(self, key: str) -> str:
        if key == "When":
            return self["when"].capitalize()
        raise KeyError(f"template slot {key!r} not filled")
