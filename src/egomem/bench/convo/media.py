"""A scenario as two recordings (day 1, day 2), cached by a hash of what they show and say.

Each person gets their own voice (by gender where the installed voices allow; never one
voice for two people) and their own face identity (a different photo on day 2 where the
identity has one). A day is: a short empty scene, then each visit (the face appears,
a moment later the person speaks their turns with a pause after each, where the
assistant answers), with empty scene between visits.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from egomem.bench.convo.render import (
    Face,
    Voice,
    face_pool,
    frame_for,
    installed_voices,
    silence,
    synthesize,
    temp_dir,
    write_mp4,
)
from egomem.errors import InputError
from egomem.perception.audio import SAMPLE_RATE
from egomem_eval.convo.scenario import Scenario

RENDER_VERSION = 1  # bump when the layout below changes: old cache entries are then ignored
LEAD_S, ARRIVE_S, TURN_GAP_S, ABSENT_S = 3.0, 2.0, 2.5, 6.0


@dataclass
class Visit:
    person: str
    start: float  # face appears
    end: float  # face leaves
    turns: list[tuple[float, float]]  # each turn's speech (start, end)


@dataclass
class RenderedDay:
    path: Path
    duration_s: float
    visits: list[Visit]


def cast(sc: Scenario, shared: Path) -> tuple[dict[str, Voice], dict[str, Face]]:
    """Who speaks with which voice and shows which face (deterministic per scenario)."""
    rng = random.Random(f"cast:{sc.split}:{sc.seed}")
    voices = installed_voices()
    rng.shuffle(voices)
    if len(voices) < len(sc.people):
        raise InputError(f"{len(sc.people)} people need as many TTS voices; installed: {len(voices)}")
    voice_of: dict[str, Voice] = {}
    for p in sc.people:
        free = [v for v in voices if v not in voice_of.values()]
        voice_of[p.name] = next((v for v in free if v.gender == p.gender), free[0])
    faces = rng.sample(face_pool(shared), len(sc.people))
    return voice_of, {p.name: f for p, f in zip(sc.people, faces, strict=True)}


def cache_root() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "egomem" / "bench-conversation"


def render_scenario(sc: Scenario, shared: Path, cache: Path | None = None) -> list[RenderedDay]:
    """The scenario's two days as mp4 files (from the cache when already rendered)."""
    voice_of, face_of = cast(sc, shared)
    key = {
        "version": RENDER_VERSION,
        "sessions": [(s.day, s.person, [t.text for t in s.turns]) for s in sc.sessions],
        "voices": {k: v.id for k, v in voice_of.items()},
        "faces": {k: [str(p) for p in f.photos[:2]] for k, f in face_of.items()},
    }
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    folder = (cache or cache_root()) / f"{sc.split}-{sc.seed}-{digest}"
    index = folder / "render.json"
    if index.is_file():
        return [_day_from_json(folder, d) for d in json.loads(index.read_text())]
    folder.mkdir(parents=True, exist_ok=True)
    days = [_render_day(sc, day, voice_of, face_of, folder) for day in (1, 2)]
    index.write_text(json.dumps([{**asdict(d), "path": d.path.name} for d in days], indent=1))
    return days


def _render_day(
    sc: Scenario, day: int, voice_of: dict[str, Voice], face_of: dict[str, Face], folder: Path
) -> RenderedDay:
    audio: list[np.ndarray] = [silence(LEAD_S)]
    spans: list[tuple[float, float, np.ndarray]] = [(0.0, LEAD_S, frame_for(None))]
    visits: list[Visit] = []
    t = LEAD_S
    with temp_dir() as tmp:
        for s in (s for s in sc.sessions if s.day == day):
            photos = face_of[s.person].photos
            photo = photos[min(day - 1, len(photos) - 1)]
            start = t
            audio.append(silence(ARRIVE_S))
            t += ARRIVE_S
            turns = []
            for u in s.turns:
                speech = synthesize(u.text, voice_of[s.person], Path(tmp))
                turns.append((t, t + speech.size / SAMPLE_RATE))
                audio += [speech, silence(TURN_GAP_S)]
                t += speech.size / SAMPLE_RATE + TURN_GAP_S
            visits.append(Visit(s.person, start, t, turns))
            spans.append((start, t, frame_for(photo)))
            audio.append(silence(ABSENT_S))
            spans.append((t, t + ABSENT_S, frame_for(None)))
            t += ABSENT_S
    pcm = np.concatenate(audio)
    path = folder / f"day{day}.mp4"
    write_mp4(path, pcm, spans)
    return RenderedDay(path, pcm.size / SAMPLE_RATE, visits)


def _day_from_json(folder: Path, d: dict[str, Any]) -> RenderedDay:
    visits = [
        Visit(str(v["person"]), float(v["start"]), float(v["end"]), [(float(a), float(b)) for a, b in v["turns"]])
        for v in d["visits"]
    ]
    return RenderedDay(folder / str(d["path"]), float(d["duration_s"]), visits)
