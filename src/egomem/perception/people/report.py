"""What the analysis of a clip reports: tracks, voices, links with their evidence, and the people
found (linked pairs + unlinked tracks + unlinked voices with enough speech).

Perception knows no identities: a track gets a name only through a lookup the caller supplies
(`reference_lookup` builds one from reference stills; the runtime can pass the identity layer's
face match), as `diarization.map_to_users` does for voices."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from egomem.perception.diarization.types import Diarization
from egomem.perception.people.link import LinkDecision
from egomem.perception.people.tracks import FaceTrack

FaceLookup = Callable[[np.ndarray], "tuple[str, float] | None"]


def reference_lookup(references: Mapping[str, np.ndarray], threshold: float) -> FaceLookup:
    """A lookup naming a face descriptor after the nearest reference closer than `threshold`."""
    names = list(references)
    mat = np.stack([np.asarray(references[n], dtype=np.float32) for n in names]) if names else None

    def lookup(vec: np.ndarray) -> tuple[str, float] | None:
        if mat is None:
            return None
        d = np.linalg.norm(mat - np.asarray(vec, dtype=np.float32)[None, :], axis=1)
        i = int(np.argmin(d))
        return (names[i], float(d[i])) if d[i] < threshold else None

    return lookup


def name_tracks(tracks: list[FaceTrack], lookup: FaceLookup) -> dict[int, tuple[str, float]]:
    """Track id -> (name, distance) for every track whose mean descriptor the lookup recognises."""
    out: dict[int, tuple[str, float]] = {}
    for tr in tracks:
        if tr.embeddings:
            hit = lookup(tr.centroid())
            if hit is not None:
                out[tr.id] = hit
    return out


@dataclass
class Person:
    id: int
    kind: str  # "seen and heard", "seen" or "heard"
    tracks: list[int]
    voice: int | None
    name: str | None
    name_distance: float | None
    seen_s: float
    heard_s: float
    first_s: float
    last_s: float
    link_confidence: float | None = None


@dataclass
class Timing:
    decode_s: float = 0.0
    faces_s: float = 0.0
    voices_s: float = 0.0
    link_s: float = 0.0
    wall_s: float = 0.0
    cpu_s: float = 0.0
    rtf: float = 0.0  # wall seconds of analysis (decoding included, model loading not) per clip second
    cpu_rtf: float = 0.0  # process CPU seconds of the analysis (decoding not included) per clip second
    loadavg_start: list[float] | None = None


@dataclass
class PeopleReport:
    source: str
    duration_s: float
    fps: float
    tracks: list[FaceTrack]
    diarization: Diarization
    decision: LinkDecision
    people: list[Person]
    names: dict[int, tuple[str, float]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    timing: Timing = field(default_factory=Timing)
    tracker_stats: dict[str, Any] = field(default_factory=dict)

    def voices(self) -> list[dict[str, Any]]:
        speaking = self.diarization.speaking_time()
        out = []
        for v in sorted(speaking):
            ts = [t for t in self.diarization.turns if t.speaker == v]
            out.append({
                "id": v, "speech_s": round(speaking[v], 3), "turns": len(ts),
                "first_s": round(min(t.start for t in ts), 3), "last_s": round(max(t.end for t in ts), 3),
            })  # fmt: skip
        return out

    def to_dict(self) -> dict[str, Any]:
        tracks = []
        for tr in self.tracks:
            s = tr.summary(self.fps)
            if tr.id in self.names:
                s["name"], s["name_distance"] = self.names[tr.id][0], round(self.names[tr.id][1], 4)
            tracks.append(s)
        return {
            "source": self.source,
            "duration_s": round(self.duration_s, 3),
            "fps": self.fps,
            "warnings": list(self.warnings),
            "tracks": tracks,
            "voices": self.voices(),
            **self.decision.to_dict(),
            "people": [_rounded(asdict(p)) for p in self.people],
            "timing": _rounded(asdict(self.timing)),
            "tracker": _rounded(self.tracker_stats),
        }


def _rounded(d: dict[str, Any]) -> dict[str, Any]:
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in d.items()}


def find_people(
    tracks: list[FaceTrack],
    diarization: Diarization,
    decision: LinkDecision,
    names: Mapping[int, tuple[str, float]],
    fps: float,
    min_voice_s: float,
) -> list[Person]:
    """Linked pairs, then unlinked tracks, then unlinked voices with at least `min_voice_s` of speech."""
    speaking = diarization.speaking_time()
    spans: dict[int, tuple[float, float]] = {}
    for t in diarization.turns:
        a, b = spans.get(t.speaker, (t.start, t.end))
        spans[t.speaker] = (min(a, t.start), max(b, t.end))
    by_id = {tr.id: tr for tr in tracks}
    people: list[Person] = []

    def add(track: FaceTrack | None, voice: int | None, confidence: float | None) -> None:
        name = names.get(track.id) if track is not None else None
        ends = ([(track.start, track.end)] if track else []) + ([spans[voice]] if voice in spans else [])
        first, last = [a for a, _ in ends], [b for _, b in ends]
        kind = "seen and heard" if track is not None and voice is not None else "seen" if track else "heard"
        people.append(Person(
            len(people), kind, [track.id] if track else [], voice, name[0] if name else None,
            round(name[1], 4) if name else None, round(track.visible_s(fps), 3) if track else 0.0,
            round(speaking.get(voice, 0.0), 3) if voice is not None else 0.0, round(min(first), 3),
            round(max(last), 3), round(confidence, 4) if confidence is not None else None,
        ))  # fmt: skip

    for lk in decision.links:
        add(by_id[lk.track], lk.voice, lk.confidence)
    linked_t = {lk.track for lk in decision.links}
    linked_v = {lk.voice for lk in decision.links}
    for tr in tracks:
        if tr.id not in linked_t:
            add(tr, None, None)
    for v in sorted(speaking):
        if v not in linked_v and speaking[v] >= min_voice_s:
            add(None, v, None)
    return people
