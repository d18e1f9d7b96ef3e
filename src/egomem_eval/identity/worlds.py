"""Generated multi-day worlds for `bench identity`: real people (a face identity's photos and a
LibriSpeech speaker's speech) who visit the assistant over 2-3 days and tell it things.

People: the face identities (with at least two single-person photos) and LibriSpeech speakers of
one split of `egomem_eval.identity.trials` (split by identity: no face or voice is in both dev and
test, and none is in train, where the calibration was fitted). Every world holds one pair of hard
persons (`hard_pairs.hard_persons`: the k-th closest different-identity face pair given the k-th
closest different-speaker voice pair of the split), the others drawn at random; 3-6 people, 2-3 days.

Visits: each person comes once or twice a day (never twice in a row), says 2 facts per visit in
ordinary phrasing (the conversation generator's templates of the same split, egomem_eval/convo) and
a line of small talk. Naming: `every_day` people introduce themselves at their first visit of each
day, `day1` only at their first visit of day 1, `never` never say their name.

Same (split, seed, pool), same world.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from egomem.config import Config
from egomem_eval.convo.bank import draw_person
from egomem_eval.convo.templates import templates
from egomem_eval.identity.hard_pairs import HARD_PERSONS, hard_face_pairs, hard_persons, hard_voice_pairs
from egomem_eval.identity.trials import face_images, face_splits, face_trials, speakers, voice_splits, voice_trials

NAMINGS = ("every_day", "day1", "never")
NAMING_WEIGHTS = (0.4, 0.4, 0.2)
FACTS_PER_VISIT = 2
SECOND_VISIT_P = 0.3  # chance a person comes twice on a day


@dataclass
class Pool:
    """The people material of one split: face identity -> photos, speaker -> speech (all of their
    utterances, concatenated), and the hard persons as pairs of (speaker, face identity)."""

    split: str
    faces: dict[str, list[Path]]
    speech: dict[str, np.ndarray]
    hard: list[tuple[tuple[str, str], tuple[str, str]]]


@dataclass
class Line:
    kind: str  # "intro" | "fact" | "smalltalk" | "greet_again"
    text: str


@dataclass
class WorldPerson:
    key: str  # "p0", "p1", ... within the world
    name: str
    face: str
    speaker: str
    naming: str
    hard: bool
    fact_lines: list[str] = field(default_factory=list)


@dataclass
class PlannedVisit:
    person: str  # WorldPerson.key
    day: int
    photo: Path
    lines: list[Line]

    @property
    def says_name(self) -> bool:
        return any(x.kind == "intro" for x in self.lines)


@dataclass
class World:
    split: str
    seed: int
    days: int
    people: list[WorldPerson]
    visits: list[PlannedVisit]

    def person(self, key: str) -> WorldPerson:
        return next(p for p in self.people if p.key == key)


def load_pool(cfg: Config, data: Path, split: str, cache_dir: Path) -> Pool:
    """The split's faces and speakers (embeddings cached as the fusion trials cache them) and its hard pairs."""
    images = face_images(cfg, data, cache_dir)
    f_split = face_splits(images)
    faces: dict[str, list[Path]] = {}
    for im in images:
        if f_split[im.identity] == split:
            faces.setdefault(im.identity, []).append(im.path)
    faces = {k: sorted(v) for k, v in faces.items() if len(v) > 1}
    spks = speakers(data)
    v_split = voice_splits(spks)
    speech = {s.name: np.concatenate([a for _, a in (*s.enroll, *s.queries)]) for s in spks if v_split[s.name] == split}
    ft = face_trials(images, f_split, split)
    vt = voice_trials(cfg, spks, v_split, split, cache_dir)
    n_images = {k: len(v) for k, v in faces.items()}
    hp = list(hard_persons(hard_face_pairs(ft), hard_voice_pairs(vt), n_images, pairs=HARD_PERSONS).items())
    hard = [(hp[i], hp[i + 1]) for i in range(0, len(hp) - 1, 2)]
    return Pool(split, faces, speech, hard)


def _fill(text: str, **slots: str) -> str:
    out = text.format(**slots)
    return out[0].upper() + out[1:]


def _say(rng: random.Random, split: str, kind: str, **slots: str) -> str:
    return _fill(rng.choice(templates(split, kind)).text, **slots)


def _fact_lines(rng: random.Random, split: str, name_taken: set[str]) -> tuple[str, list[str]]:
    """A name and the lines that state one person's facts (job, home, two likes, a dislike, a habit)."""
    p = draw_person(rng, name_taken)
    lines = [
        _say(rng, split, "job_noun", job=p.job.noun),
        _say(rng, split, "home", city=p.home),
        *(_say(rng, split, "like", like=x.text) for x in p.likes),
        *(_say(rng, split, "dislike", dislike=x.text) for x in p.dislikes),
        *(_say(rng, split, "habit", habit=h.base, when=w, When=w.capitalize()) for h, w in p.habits),
    ]
    rng.shuffle(lines)
    return p.name, lines


def _order(rng: random.Random, keys: list[str]) -> list[str]:
    """The day's visits in random order, no person twice in a row (a few shuffles; else as drawn)."""
    for _ in range(50):
        rng.shuffle(keys)
        if all(a != b for a, b in itertools.pairwise(keys)):
            break
    return keys


def generate_world(pool: Pool, seed: int, *, n_people: int | None = None, days: int | None = None) -> World:
    """World `seed` of the pool's split: 3-6 people and 2-3 days unless given."""
    rng = random.Random(f"identity:{pool.split}:{seed}")
    n_people = n_people or rng.randint(3, 6)
    days = days or rng.randint(2, 3)
    if len(pool.faces) < n_people or len(pool.speech) < n_people:
        have = f"{len(pool.faces)} faces, {len(pool.speech)} speakers"
        raise ValueError(f"{pool.split} split: {have} for {n_people} people")
    pairs: list[tuple[str, str, bool]] = []  # (speaker, face, hard)
    if pool.hard:
        for spk, face in pool.hard[seed % len(pool.hard)]:
            pairs.append((spk, face, True))
    free_faces = sorted(set(pool.faces) - {f for _, f, _ in pairs})
    free_spks = sorted(set(pool.speech) - {s for s, _, _ in pairs})
    rest = n_people - len(pairs)
    pairs += [(s, f, False) for s, f in zip(rng.sample(free_spks, rest), rng.sample(free_faces, rest), strict=True)]
    rng.shuffle(pairs)
    taken: set[str] = set()
    people = []
    for i, (spk, face, hard) in enumerate(pairs):
        name, facts = _fact_lines(rng, pool.split, taken)
        naming = rng.choices(NAMINGS, NAMING_WEIGHTS)[0]
        people.append(WorldPerson(f"p{i}", name, face, spk, naming, hard, facts))
    visits: list[PlannedVisit] = []
    said: dict[str, int] = {p.key: 0 for p in people}  # fact lines said so far (they cycle)
    seen: dict[str, int] = {p.key: 0 for p in people}  # visits so far (photos cycle)
    for day in range(1, days + 1):
        keys = [p.key for p in people for _ in range(2 if rng.random() < SECOND_VISIT_P else 1)]
        first_today: set[str] = set()
        for key in _order(rng, keys):
            p = next(x for x in people if x.key == key)
            lines: list[Line] = []
            first = key not in first_today
            first_today.add(key)
            if day > 1 and first:
                lines.append(Line("greet_again", _say(rng, pool.split, "greet_again")))
            if first and (p.naming == "every_day" or (p.naming == "day1" and day == 1)):
                lines.append(Line("intro", _say(rng, pool.split, "intro", name=p.name)))
            for _ in range(FACTS_PER_VISIT):
                lines.append(Line("fact", p.fact_lines[said[key] % len(p.fact_lines)]))
                said[key] += 1
            lines.append(Line("smalltalk", _say(rng, pool.split, "smalltalk")))
            photos = pool.faces[p.face]
            visits.append(PlannedVisit(key, day, photos[seen[key] % len(photos)], lines))
            seen[key] += 1
    return World(pool.split, seed, days, people, visits)


def speech_windows(speech: np.ndarray, window_s: float, hop_s: float, sample_rate: int) -> list[np.ndarray]:
    """The last `window_s` of a person's speech at each poll, polls `hop_s` apart (the whole speech
    when it is shorter than one window): poll k of that person hears window k (cycling)."""
    n, hop = int(window_s * sample_rate), int(hop_s * sample_rate)
    if speech.size <= n:
        return [speech]
    return [speech[i : i + n] for i in range(0, speech.size - n + 1, hop)]
