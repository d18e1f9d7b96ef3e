"""The bank people are drawn from: plain lists, sampled with a seeded RNG (nothing hand-fitted).

Every slot value carries its key words: the word stems a stored fact (or an answer) must
contain to count as that value (see `score.matches`). Stems are prefixes: "teach" covers
"teacher", "teaches" and "teaching".
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

Keys = tuple[tuple[str, ...], ...]  # all groups must match; any stem of a group matches it

FEMALE = (
    "Anna Maria Emily Sarah Laura Julia Sophie Hannah Olivia Grace Chloe Lucy Emma Rachel Nina Claire Helen Rosa "
    "Alice Diana Irene Karen Linda Megan Paula Ruth Tina Vera Wendy Zoe Fiona Bella Carmen Eva Ingrid Lena Mia "
    "Nora Sara Tessa"
).split()
MALE = (
    "John David Michael Peter Thomas Daniel James Robert Paul Mark Lucas Adam Oscar Victor Henry George Frank "
    "Leo Simon Martin Patrick Steven Kevin Brian Carlos Dennis Edward Felix Gary Hugo Ivan Jack Kyle Liam Noah "
    "Owen Ryan Sam Tom Walter"
).split()

CITIES = (
    "London Paris Berlin Madrid Lisbon Rome Vienna Dublin Boston Chicago Seattle Denver Toronto Sydney Oslo "
    "Prague Warsaw Athens Amsterdam Brussels Zurich Munich Milan Barcelona Glasgow Bristol Manchester Edinburgh "
    "Portland Austin"
).split()


@dataclass(frozen=True)
class Job:
    noun: str  # with article: "a nurse"
    verb: str  # first person, "" when only said as a noun: "teach biology"
    keys: Keys


JOBS = (
    Job("a nurse", "", (("nurse",),)),
    Job("a biology teacher", "teach biology", (("biology",), ("teach",))),
    Job("a taxi driver", "drive a taxi", (("taxi",), ("driv",))),
    Job("an accountant", "", (("accountant", "accounting"),)),
    Job("a baker", "bake bread", (("bak",),)),
    Job("a software engineer", "write software", (("software",),)),
    Job("a lawyer", "practise law", (("lawyer", "law"),)),
    Job("a dentist", "", (("dentist",),)),
    Job("a plumber", "fix pipes", (("plumb", "pipe"),)),
    Job("an architect", "design buildings", (("architect", "design"),)),
    Job("a chef", "cook in a restaurant", (("chef", "cook"),)),
    Job("a pilot", "fly planes", (("pilot", "fly", "plane"),)),
    Job("a journalist", "write for a newspaper", (("journalist", "newspaper"),)),
    Job("a librarian", "run the town library", (("librar",),)),
    Job("a firefighter", "", (("firefight", "fire"),)),
    Job("a pharmacist", "", (("pharmac",),)),
    Job("a mechanic", "repair cars", (("mechanic", "repair", "car"),)),
    Job("a music teacher", "teach music", (("music",), ("teach",))),
    Job("an electrician", "", (("electric",),)),
    Job("a photographer", "take wedding photos", (("photograph", "photo"),)),
    Job("a veterinarian", "look after sick animals", (("veterinar", "vet", "animal"),)),
    Job("a carpenter", "build furniture", (("carpent", "furniture"),)),
    Job("a bus driver", "drive a bus", (("bus",), ("driv",))),
    Job("a police officer", "", (("police",),)),
)


@dataclass(frozen=True)
class Thing:
    """A like or dislike: the noun phrase as said, and its key words."""

    text: str
    keys: Keys


LIKES = tuple(
    Thing(t, k)
    for t, k in (
        ("jazz", (("jazz",),)),
        ("hiking", (("hik",),)),
        ("chess", (("chess",),)),
        ("gardening", (("garden",),)),
        ("Italian food", (("italian",),)),
        ("sushi", (("sushi",),)),
        ("board games", (("board",), ("game",))),
        ("football", (("football", "soccer"),)),
        ("classical music", (("classical",),)),
        ("painting", (("paint",),)),
        ("science fiction", (("science", "sci"),)),
        ("tennis", (("tennis",),)),
        ("cycling", (("cycl", "bik"),)),
        ("photography", (("photograph",),)),
        ("baseball", (("baseball",),)),
        ("dancing", (("danc",),)),
        ("opera", (("opera",),)),
        ("fishing", (("fish",),)),
        ("yoga", (("yoga",),)),
        ("crossword puzzles", (("crossword",),)),
        ("horror movies", (("horror",),)),
        ("chocolate", (("chocolate",),)),
        ("camping", (("camp",),)),
        ("knitting", (("knit",),)),
    )
)
DISLIKES = tuple(
    Thing(t, k)
    for t, k in (
        ("mushrooms", (("mushroom",),)),
        ("spiders", (("spider",),)),
        ("traffic jams", (("traffic",),)),
        ("rainy weather", (("rain",),)),
        ("loud music", (("loud",),)),
        ("olives", (("olive",),)),
        ("crowded trains", (("crowd", "train"),)),
        ("cold coffee", (("cold",), ("coffee",))),
        ("flying", (("fly", "flight"),)),
        ("reality shows", (("reality",),)),
        ("early mornings", (("early",),)),
        ("spicy food", (("spic",),)),
        ("snow", (("snow",),)),
        ("waiting in lines", (("wait", "line", "queue"),)),
        ("cucumber", (("cucumber",),)),
        ("horror films", (("horror",),)),
    )
)


@dataclass(frozen=True)
class Habit:
    base: str  # "go swimming"
    ing: str  # "going swimming"
    third: str  # "goes swimming"
    keys: Keys


HABITS = tuple(
    Habit(b, i, t, k)
    for b, i, t, k in (
        ("go swimming", "going swimming", "goes swimming", (("swim",),)),
        ("go running", "going running", "goes running", (("run",),)),
        ("walk my dog", "walking my dog", "walks the dog", (("dog",),)),
        ("read the newspaper", "reading the newspaper", "reads the newspaper", (("newspaper", "news"),)),
        ("play the piano", "playing the piano", "plays the piano", (("piano",),)),
        ("go to the gym", "going to the gym", "goes to the gym", (("gym",),)),
        ("drink green tea", "drinking green tea", "drinks green tea", (("tea",),)),
        ("meditate", "meditating", "meditates", (("meditat",),)),
        ("play golf", "playing golf", "plays golf", (("golf",),)),
        ("go to church", "going to church", "goes to church", (("church",),)),
        ("ride my bike to work", "riding my bike to work", "rides a bike to work", (("bike", "cycl"),)),
        ("call my mother", "calling my mother", "calls their mother", (("call",), ("mother", "mom", "mum"))),
        ("go to the market", "going to the market", "goes to the market", (("market",),)),
        ("play volleyball", "playing volleyball", "plays volleyball", (("volleyball",),)),
        ("write in my journal", "writing in my journal", "writes in a journal", (("journal", "diary"),)),
        ("bake cakes", "baking cakes", "bakes cakes", (("cake",),)),
    )
)
WHEN = ("every morning", "on weekends", "every Sunday", "twice a week", "after work", "every evening")

# Family words for named relatives who are not met in the scenario: word -> gender of the relative.
FAMILY = {"son": "m", "daughter": "f", "sister": "f", "brother": "m", "mother": "f", "father": "m"}


@dataclass
class Person:
    name: str
    gender: str  # "f" | "m"
    job: Job
    home: str
    relatives: list[tuple[str, str]]  # (family word, name) of people not met in the scenario
    likes: list[Thing]
    dislikes: list[Thing]
    habits: list[tuple[Habit, str]]  # (habit, when)
    # Filled by the scenario: what changes on day 2.
    new_job: Job | None = None
    new_home: str | None = None
    extra: dict[str, str] = field(default_factory=dict)


def draw_person(rng: random.Random, taken: set[str]) -> Person:
    """One person from the bank; names in `taken` are not reused (and are added to it)."""
    gender = rng.choice("fm")
    name = draw_name(rng, taken, gender)
    relatives = []
    for word in rng.sample(sorted(FAMILY), 1):
        relatives.append((word, draw_name(rng, taken, FAMILY[word])))
    likes = rng.sample(LIKES, 2)
    # A dislike never names what the same person likes (both "horror" lists exist).
    dislikes = [rng.choice([d for d in DISLIKES if not overlap(d.keys, [x.keys for x in likes])])]
    return Person(
        name=name,
        gender=gender,
        job=rng.choice(JOBS),
        home=rng.choice(CITIES),
        relatives=relatives,
        likes=likes,
        dislikes=dislikes,
        habits=[(rng.choice(HABITS), rng.choice(WHEN))],
    )


def draw_name(rng: random.Random, taken: set[str], gender: str) -> str:
    pool = [n for n in (FEMALE if gender == "f" else MALE) if n not in taken]
    name = rng.choice(pool)
    taken.add(name)
    return name


def overlap(keys: Keys, others: list[Keys]) -> bool:
    words = {w for g in keys for w in g}
    return any(words & {w for g in o for w in g} for o in others)
