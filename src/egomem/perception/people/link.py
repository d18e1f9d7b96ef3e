"""Face-voice linking by evidence.

Time is cut into windows (1 s). In each window a face track is *visible* when it has a detection
there and *measured* when its lip activity (lips.py) has at least `min_samples` changes there;
its lips *move* when the mean activity reaches `moving`. A voice cluster is *speaking* when its
turns cover at least `voice_active` of the window and *silent* under `voice_silent`.

Per (track, voice) pair, each window where that voice speaks alone (no other voice speaking) is
- **support**: the track's lips move and every other visible face is measured and still (when
  the track is the only face on screen, this is the meta-clip co-occurrence with moving lips);
- **against**: the track's lips are still while the voice speaks;
- **ambiguous**: the track's lips move but so do another face's, or another visible face cannot
  be measured (too small): neutral;
- **unmeasured**: the track is visible but too small for its lips: neutral.
A window where the voice is silent and the track's lips move is **against** too (it talks as
someone else, or its mouth moves for other reasons). Windows with two voices are not used.
`cooccurrence_s` keeps the seconds where the track was the only face and the voice the only
voice, whatever the lips did.

A pair is linked when both one-sided 95 % Wilson lower bounds pass 0.5 (`min_confidence`):
*consistency*, support out of support + against (the track is this voice's mouth more often than
not when both are there), and *exclusivity*, the pair's support out of the support of every track
for this voice (the evidence is not split between faces). Few windows give low bounds, so links
wait for evidence: with nothing against, 3 supporting windows are the fewest that link. Then a
one-to-one assignment (`linear_sum_assignment` on the confidence): a voice is never linked to two
tracks, a track never to two voices. Every other voice and track with evidence gets an
abstention saying why.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from egomem.perception.diarization.cluster import union_length
from egomem.perception.diarization.types import Turn
from egomem.perception.people.lips import activity
from egomem.perception.people.tracks import FaceTrack


@dataclass(frozen=True)
class LinkConfig:
    window_s: float = 1.0
    # Lips move when the mean |change of opening| per 0.2 s sample (inter-ocular units) reaches
    # this: 0.03 is ~2 mm of a ~63 mm eye distance, under the several mm a syllable moves the lips
    # and 3x the noise floor of the measurement (a still photo through H.264 at 5 fps: mean 0.010;
    # scripts/people_calibration.py).
    moving: float = 0.03
    min_samples: int = 2  # lip changes in a window for the track to count as measured there
    voice_active: float = 0.5  # share of the window a voice's turns cover: speaking
    voice_silent: float = 0.1  # under this: silent
    z: float = 1.645  # one-sided 95 % for the Wilson lower bounds
    min_confidence: float = 0.5


@dataclass
class FaceInWindow:
    activity: float | None  # mean lip activity, None when not measured


@dataclass
class WindowObservation:
    start: float
    end: float
    faces: dict[int, FaceInWindow]  # visible tracks
    voices: dict[int, float]  # voice cluster -> share of the window its turns cover

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass
class PairEvidence:
    track: int
    voice: int
    support: list[float] = field(default_factory=list)  # window starts
    against: list[float] = field(default_factory=list)
    ambiguous: list[float] = field(default_factory=list)
    unmeasured: list[float] = field(default_factory=list)
    cooccurrence_s: float = 0.0
    lip_on: list[float] = field(default_factory=list)  # the track's activity in windows the voice spoke alone
    lip_off: list[float] = field(default_factory=list)  # ... and in windows it was silent
    consistency: float = 0.0
    exclusivity: float = 0.0

    @property
    def confidence(self) -> float:
        return min(self.consistency, self.exclusivity)

    def to_dict(self, window_s: float) -> dict[str, Any]:
        def mean(xs: list[float]) -> float | None:
            return round(float(np.mean(xs)), 4) if xs else None

        return {
            "track": self.track,
            "voice": self.voice,
            "support_windows": len(self.support),
            "against_windows": len(self.against),
            "ambiguous_windows": len(self.ambiguous),
            "unmeasured_windows": len(self.unmeasured),
            "support_s": round(len(self.support) * window_s, 3),
            "against_s": round(len(self.against) * window_s, 3),
            "cooccurrence_s": round(self.cooccurrence_s, 3),
            "lip_activity_voice_speaking": mean(self.lip_on),
            "lip_activity_voice_silent": mean(self.lip_off),
            "consistency": round(self.consistency, 4),
            "exclusivity": round(self.exclusivity, 4),
            "confidence": round(self.confidence, 4),
            "support_at_s": [round(x, 3) for x in self.support],
            "against_at_s": [round(x, 3) for x in self.against],
        }


@dataclass
class Link:
    track: int
    voice: int
    confidence: float
    evidence: PairEvidence


@dataclass
class Abstention:
    voice: int | None
    track: int | None
    reason: str


@dataclass
class LinkDecision:
    links: list[Link]
    abstentions: list[Abstention]
    pairs: list[PairEvidence]
    window_s: float = 1.0

    def linked_voice(self, track: int) -> int | None:
        return next((lk.voice for lk in self.links if lk.track == track), None)

    def linked_track(self, voice: int) -> int | None:
        return next((lk.track for lk in self.links if lk.voice == voice), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "links": [
                {"track": lk.track, "voice": lk.voice, "confidence": round(lk.confidence, 4),
                 "evidence": lk.evidence.to_dict(self.window_s)}
                for lk in self.links
            ],
            "abstentions": [asdict(a) for a in self.abstentions],
            "pairs": [p.to_dict(self.window_s) for p in self.pairs],
        }  # fmt: skip


def wilson_lower(successes: int, n: int, z: float) -> float:
    """One-sided Wilson score lower bound of a proportion (0 when n is 0)."""
    if n <= 0:
        return 0.0
    p = successes / n
    z2 = z * z
    centre = p + z2 / (2 * n)
    margin = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return max(0.0, (centre - margin) / (1 + z2 / n))


class EvidenceAccumulator:
    """Evidence per (track, voice) pair, window by window (usable live: add windows as they end)."""

    def __init__(self, config: LinkConfig | None = None) -> None:
        self.config = config or LinkConfig()
        self.pairs: dict[tuple[int, int], PairEvidence] = {}
        self.windows = 0

    def _pair(self, t: int, v: int) -> PairEvidence:
        return self.pairs.setdefault((t, v), PairEvidence(t, v))

    def add(self, w: WindowObservation) -> None:
        c = self.config
        self.windows += 1
        speaking = [v for v, share in w.voices.items() if share >= c.voice_active]
        silent = [v for v, share in w.voices.items() if share < c.voice_silent]
        moving = {t: f.activity is not None and f.activity >= c.moving for t, f in w.faces.items()}
        if len(speaking) == 1:
            v = speaking[0]
            for t, f in w.faces.items():
                p = self._pair(t, v)
                if len(w.faces) == 1:
                    p.cooccurrence_s += w.duration
                if f.activity is None:
                    p.unmeasured.append(w.start)
                    continue
                p.lip_on.append(f.activity)
                others = [o for o in w.faces if o != t]
                if not moving[t]:
                    p.against.append(w.start)
                elif all(w.faces[o].activity is not None and not moving[o] for o in others):
                    p.support.append(w.start)
                else:
                    p.ambiguous.append(w.start)
        if not speaking:
            for v in silent:
                for t, f in w.faces.items():
                    if f.activity is None:
                        continue
                    p = self._pair(t, v)
                    p.lip_off.append(f.activity)
                    if moving[t]:
                        p.against.append(w.start)

    def decide(self) -> LinkDecision:
        from scipy.optimize import linear_sum_assignment

        c = self.config
        pairs = sorted(self.pairs.values(), key=lambda p: (p.voice, p.track))
        total: dict[int, int] = {}
        for p in pairs:
            total[p.voice] = total.get(p.voice, 0) + len(p.support)
        for p in pairs:
            p.consistency = wilson_lower(len(p.support), len(p.support) + len(p.against), c.z)
            p.exclusivity = wilson_lower(len(p.support), total[p.voice], c.z)
        eligible = [p for p in pairs if p.confidence > c.min_confidence]
        links: list[Link] = []
        if eligible:
            tracks = sorted({p.track for p in eligible})
            voices = sorted({p.voice for p in eligible})
            gain = np.zeros((len(tracks), len(voices)))
            for p in eligible:
                gain[tracks.index(p.track), voices.index(p.voice)] = p.confidence
            rows, cols = linear_sum_assignment(-gain)
            by = {(p.track, p.voice): p for p in eligible}
            for i, j in zip(rows, cols, strict=True):
                hit = by.get((tracks[i], voices[j]))
                if hit is not None:
                    links.append(Link(hit.track, hit.voice, hit.confidence, hit))
        links.sort(key=lambda lk: lk.voice)
        return LinkDecision(links, _abstentions(pairs, links, c), pairs, c.window_s)


def _abstentions(pairs: list[PairEvidence], links: list[Link], c: LinkConfig) -> list[Abstention]:
    linked_v = {lk.voice: lk for lk in links}
    linked_t = {lk.track: lk for lk in links}
    out: list[Abstention] = []
    for v in sorted({p.voice for p in pairs}):
        if v in linked_v:
            continue
        ps = sorted((p for p in pairs if p.voice == v), key=lambda p: (-p.confidence, -len(p.support)))
        with_support = [p for p in ps if p.support]
        if not with_support:
            out.append(Abstention(v, None, "no face's lips moved alone while this voice spoke"))
            continue
        best = with_support[0]
        if best.confidence > c.min_confidence and best.track in linked_t:
            reason = f"its best face, track {best.track}, is linked to voice {linked_t[best.track].voice}"
        elif len(with_support) > 1 and best.exclusivity <= c.min_confidence:
            parts = ", ".join(f"track {p.track} {len(p.support)}" for p in with_support)
            reason = f"split evidence: supporting windows {parts} (exclusivity {best.exclusivity:.2f})"
        else:
            reason = (
                f"too little or contrary evidence: track {best.track} {len(best.support)} supporting vs "
                f"{len(best.against)} against windows (confidence {best.confidence:.2f} <= {c.min_confidence})"
            )
        out.append(Abstention(v, best.track, reason))
    return out


def observe_windows(
    tracks: Sequence[FaceTrack],
    turns: Iterable[Turn],
    start: float,
    end: float,
    fps: float,
    config: LinkConfig | None = None,
) -> list[WindowObservation]:
    """The windows of [start, end): visible tracks with their lip activity, voices with their coverage."""
    c = config or LinkConfig()
    turns = list(turns)
    acts = {tr.id: activity(tr.openings(), 1.5 / fps) for tr in tracks}
    out = []
    n = max(0, math.floor((end - start) / c.window_s + 1e-9))
    for k in range(n):
        a, b = start + k * c.window_s, start + (k + 1) * c.window_s
        faces: dict[int, FaceInWindow] = {}
        for tr in tracks:
            if not any(a <= x < b for x in tr.times):
                continue
            vals = [d for x, d in acts[tr.id] if a <= x < b]
            faces[tr.id] = FaceInWindow(float(np.mean(vals)) if len(vals) >= c.min_samples else None)
        voices: dict[int, float] = {}
        for v in sorted({tn.speaker for tn in turns}):
            spans = [(max(a, x.start), min(b, x.end)) for x in turns if x.speaker == v and x.end > a and x.start < b]
            voices[v] = union_length(spans) / (b - a) if spans else 0.0
        out.append(WindowObservation(a, b, faces, voices))
    return out


def link(windows: Iterable[WindowObservation], config: LinkConfig | None = None) -> LinkDecision:
    acc = EvidenceAccumulator(config)
    for w in windows:
        acc.add(w)
    return acc.decide()
