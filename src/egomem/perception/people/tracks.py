"""Face tracks from sampled video frames.

Each frame (sampled at `fps`, e.g. 5) goes through:
1. **Detection**, dlib HOG in up to three passes. The *base* pass runs on the frame scaled down to
   `detect_px` with `upsample` (faces from ~40 px at that scale). A *scan* for small faces runs on
   the first frame and then every `scan_every_s`: the frame resized (Lanczos) to `scan_px` with one
   upsampling (faces from ~20 px in a 640-px frame); this is where the pianist of av_hamilton_clip,
   missed at 640 px, is found. A *region* pass re-finds a live track that the other passes missed,
   in a window around its last box scaled so the face is ~`roi_face_px`, accepting scores down to
   `roi_threshold` (a face expected at a place needs less evidence than a new one).
2. **Assignment by position**: live tracks (seen within `max_gap_s`) and detections are matched
   with `scipy.optimize.linear_sum_assignment` on the centre distance (in face sizes), gated by
   overlap or distance and by the change of size.
3. **Embeddings, once per track per second**: the 128-d descriptor (the expensive part) is computed
   for a detection that starts a track and for a matched one whose track was last embedded
   `embed_every_s` ago; a matched detection farther than `face_threshold` from its track's mean
   embedding is a different person (a cut, a crossing) and leaves the track. Unmatched detections
   are matched to lost tracks by embedding distance (re-identification after an occlusion), else
   start new tracks.
4. **Lips**: the mouth opening of every assigned detection (`lips.MouthMeter`).

`finish()` keeps tracks with at least `min_detections` detections (at 5 fps a person seen for
1 s has 5) and merges tracks of one person: mean embeddings closer than `face_threshold` (the
product's calibrated face threshold) and never on screen together (complete linkage).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from egomem.config import FaceConfig
from egomem.errors import InputError
from egomem.perception.face import FaceBox, FaceEncoder, to_rgb_uint8
from egomem.perception.people.geometry import centre_distance, chip, iou, overlap, resize, scale_box, size
from egomem.perception.people.lips import MouthMeter


@dataclass(frozen=True)
class TrackerConfig:
    fps: float = 5.0  # frames sampled per second of video (lip activity needs about 5: a syllable is ~0.2 s)
    detect_px: int = 640  # base pass: the frame's longer side scaled down to this
    upsample: int = 0  # base pass HOG upsampling (0: faces from ~80 px at detect_px; the scan finds smaller ones)
    scan_px: int = 1280  # small-face scan: the frame resized to this longer side, one upsampling
    scan_every_s: float = 1.0
    roi_face_px: int = 100  # region pass: the expected face scaled to about this size
    # Region pass: lowest HOG score accepted for a live track. The most permissive value with under
    # 1 % false detections per search around the faces of faces_lfw_subset_10x10 + faces_deepface
    # (0.6 % at -0.5, 1.3 % at -0.6; scripts/people_calibration.py), not a bench clip.
    roi_threshold: float = -0.5
    max_gap_s: float = 1.0  # a track survives this long unseen (occlusion, missed detections)
    max_shift: float = 0.6  # gate: centre moves at most this many face sizes per frame interval
    max_scale_change: float = 1.6  # gate: size ratio between consecutive boxes of a track
    embed_every_s: float = 1.0
    embed_min_px: int = 100  # smaller faces are upscaled (Lanczos) before landmarks and descriptor
    face_threshold: float = FaceConfig().threshold  # same person below this descriptor distance
    # A track continuous in position is split only when a new descriptor is this far from its mean:
    # above every same-person distance of faces_lfw_subset_10x10 (max 0.656; not a bench clip) and
    # below 90 % of its different-person distances (10th percentile 0.684).
    split_threshold: float = 0.7
    min_detections: int = 3  # shorter tracks are dropped as noise
    merge: bool = True


@dataclass
class Detection:
    t: float
    box: FaceBox
    score: float
    source: str  # "base", "scan" or "region"
    opening: float | None = None  # mouth opening (lips.py), None when not measured


@dataclass
class FaceTrack:
    id: int
    detections: list[Detection] = field(default_factory=list)
    embeddings: list[tuple[float, np.ndarray]] = field(default_factory=list)
    merged_from: list[int] = field(default_factory=list)

    @property
    def start(self) -> float:
        return self.detections[0].t

    @property
    def end(self) -> float:
        return self.detections[-1].t

    @property
    def times(self) -> list[float]:
        return [d.t for d in self.detections]

    @property
    def last(self) -> Detection:
        return self.detections[-1]

    def centroid(self) -> np.ndarray:
        return np.mean([v for _, v in self.embeddings], axis=0).astype(np.float32)

    def openings(self) -> list[tuple[float, float | None]]:
        return [(d.t, d.opening) for d in self.detections]

    def visible_s(self, fps: float) -> float:
        """Seconds on screen: one sampling interval per detection."""
        return len(self.detections) / fps

    def summary(self, fps: float) -> dict[str, Any]:
        sizes = [size(d.box) for d in self.detections]
        return {
            "id": self.id,
            "start_s": round(self.start, 3),
            "end_s": round(self.end, 3),
            "detections": len(self.detections),
            "visible_s": round(self.visible_s(fps), 3),
            "embeddings": len(self.embeddings),
            "median_face_px": round(float(np.median(sizes)), 1),
            "lips_measured": sum(d.opening is not None for d in self.detections),
            "sources": {s: sum(d.source == s for d in self.detections) for s in ("base", "scan", "region")},
            "merged_from": list(self.merged_from),
        }


@dataclass
class TrackerStats:
    frames: int = 0
    detect_s: float = 0.0
    embed_s: float = 0.0
    lips_s: float = 0.0
    embeddings: int = 0
    scans: int = 0
    region_searches: int = 0


class FaceTracker:
    """Feed frames in time order with `update(t, image)`; `tracks()` at any time, `finish()` at the end."""

    def __init__(
        self, encoder: FaceEncoder | None = None, config: TrackerConfig | None = None, mouth: MouthMeter | None = None
    ) -> None:
        self.encoder = encoder or FaceEncoder()
        self.config = config or TrackerConfig()
        if self.config.fps <= 0:
            raise InputError("tracker fps must be positive")
        self.mouth = mouth or MouthMeter()
        self.stats = TrackerStats()
        self._tracks: list[FaceTrack] = []
        self._next_id = 0
        self._last_t: float | None = None
        self._last_scan: float | None = None
        self._pending: dict[int, np.ndarray] = {}  # id(detection) -> descriptor computed this frame

    # -- per frame ---------------------------------------------------------------------------
    def update(self, t: float, image: Any) -> list[tuple[int, Detection]]:
        """Process one frame at stream time `t` (seconds, increasing): (track id, detection) pairs."""
        if self._last_t is not None and t <= self._last_t:
            raise InputError(f"frames must arrive in time order ({t:.3f} s after {self._last_t:.3f} s)")
        rgb = to_rgb_uint8(image)
        self._last_t = t
        self.stats.frames += 1
        c = self.config
        t0 = time.perf_counter()
        dets = distinct(self._base(rgb, t))
        if self._last_scan is None or t - self._last_scan >= c.scan_every_s - 1e-6:
            self._last_scan = t
            self.stats.scans += 1
            dets = distinct(dets + self._scan(rgb, t))
        self.stats.detect_s += time.perf_counter() - t0
        live = [tr for tr in self._tracks if t - tr.end <= c.max_gap_s + 1e-6]
        assigned = self._match_by_position(live, dets, t)
        # Tracks the detectors missed: look again where they were.
        t0 = time.perf_counter()
        for tr in live:
            if tr.id not in assigned:
                d = self._region(rgb, tr, t, [a.box for a in assigned.values()] + [x.box for x in dets])
                if d is not None:
                    assigned[tr.id] = d
        self.stats.detect_s += time.perf_counter() - t0
        by_id = {tr.id: tr for tr in self._tracks}
        # Once per track per second: the descriptor, and with it the check that it is the same person.
        for tid, d in list(assigned.items()):
            tr = by_id[tid]
            if t - tr.embeddings[-1][0] >= c.embed_every_s - 1e-6:
                vec = self._embed(rgb, d.box)
                if float(np.linalg.norm(vec - tr.centroid())) >= c.split_threshold:
                    del assigned[tid]
                    if all(x is not d for x in dets):
                        dets.append(d)
                    self._pending[id(d)] = vec
                else:
                    tr.embeddings.append((t, vec))
        used = {id(d) for d in assigned.values()}
        fresh = [d for d in dets if id(d) not in used]
        if fresh:
            lost = [tr for tr in live if tr.id not in assigned]
            self._reidentify_or_start(rgb, fresh, lost, assigned, t)
        self._pending.clear()
        by_id = {tr.id: tr for tr in self._tracks}
        t0 = time.perf_counter()
        for tid, d in assigned.items():
            d.opening = self.mouth.opening(rgb, d.box)
            by_id[tid].detections.append(d)
        self.stats.lips_s += time.perf_counter() - t0
        return sorted(assigned.items(), key=lambda x: x[0])

    def _base(self, rgb: np.ndarray, t: float) -> list[Detection]:
        h, w = rgb.shape[:2]
        s = min(1.0, self.config.detect_px / max(h, w))
        found = self.encoder.detect_scored(resize(rgb, s), self.config.upsample)
        return [Detection(t, scale_box(b, s, h, w), score, "base") for b, score in found]

    def _scan(self, rgb: np.ndarray, t: float) -> list[Detection]:
        h, w = rgb.shape[:2]
        s = self.config.scan_px / max(h, w)
        found = self.encoder.detect_scored(resize(rgb, s), 1)
        return [Detection(t, scale_box(b, s, h, w), score, "scan") for b, score in found]

    def _predicted(self, tr: FaceTrack, t: float) -> FaceBox:
        """The track's last box moved on at its velocity over its last two detections (when they
        were at most two frame intervals apart), else the last box."""
        last = tr.last
        if len(tr.detections) < 2:
            return last.box
        prev = tr.detections[-2]
        dt = last.t - prev.t
        if dt <= 0 or dt > 2.0 / self.config.fps + 1e-6:
            return last.box
        k = min(t - last.t, 2.0 / self.config.fps) / dt
        dy = round(k * ((last.box.top + last.box.bottom) - (prev.box.top + prev.box.bottom)) / 2)
        dx = round(k * ((last.box.left + last.box.right) - (prev.box.left + prev.box.right)) / 2)
        b = last.box
        return FaceBox(b.top + dy, b.right + dx, b.bottom + dy, b.left + dx)

    def _gate(self, tr: FaceTrack, box: FaceBox, t: float) -> float | None:
        """Centre distance (face sizes) of `box` from the track's predicted box, or None outside the gate."""
        c = self.config
        last = tr.last.box
        ratio = size(box) / size(last)
        if not 1 / c.max_scale_change <= ratio <= c.max_scale_change:
            return None
        pred = self._predicted(tr, t)
        steps = max(1.0, (t - tr.end) * c.fps)
        dist = centre_distance(pred, box)
        if dist > c.max_shift * min(steps, 3.0) and iou(pred, box) < 0.1:
            return None
        return dist

    def _match_by_position(self, live: list[FaceTrack], dets: list[Detection], t: float) -> dict[int, Detection]:
        from scipy.optimize import linear_sum_assignment

        if not live or not dets:
            return {}
        big = 1e6
        cost = np.full((len(live), len(dets)), big)
        for i, tr in enumerate(live):
            for j, d in enumerate(dets):
                g = self._gate(tr, d.box, t)
                if g is not None:
                    cost[i, j] = g
        rows, cols = linear_sum_assignment(cost)
        return {live[i].id: dets[j] for i, j in zip(rows, cols, strict=True) if cost[i, j] < big}

    def _region(self, rgb: np.ndarray, tr: FaceTrack, t: float, taken: list[FaceBox]) -> Detection | None:
        c = self.config
        h, w = rgb.shape[:2]
        last = self._predicted(tr, t)
        side = size(last)
        m = round(side * (0.5 + c.max_shift * max(1.0, (t - tr.end) * c.fps)))
        top, left = max(0, last.top - m), max(0, last.left - m)
        bottom, right = min(h, last.bottom + m), min(w, last.right + m)
        if bottom - top < 8 or right - left < 8:
            return None
        s = c.roi_face_px / side
        self.stats.region_searches += 1
        crop = resize(np.ascontiguousarray(rgb[top:bottom, left:right]), s)
        best: tuple[float, Detection] | None = None  # the candidate nearest the predicted box
        for b, score in self.encoder.detect_scored(crop, 0, c.roi_threshold):
            box = scale_box(b, s, bottom - top, right - left)
            box = FaceBox(box.top + top, box.right + left, box.bottom + top, box.left + left)
            dist = self._gate(tr, box, t)
            if dist is None or any(overlap(box, o) > 0.5 for o in taken):
                continue
            if best is None or dist < best[0]:
                best = (dist, Detection(t, box, score, "region"))
        return best[1] if best else None

    def _embed(self, rgb: np.ndarray, box: FaceBox) -> np.ndarray:
        t0 = time.perf_counter()
        img, b = chip(rgb, box, self.config.embed_min_px)
        vec = self.encoder.embed_box(img, b)
        self.stats.embed_s += time.perf_counter() - t0
        self.stats.embeddings += 1
        return vec

    def _reidentify_or_start(
        self, rgb: np.ndarray, fresh: list[Detection], lost: list[FaceTrack], assigned: dict[int, Detection], t: float
    ) -> None:
        from scipy.optimize import linear_sum_assignment

        vecs = [self._pending[id(d)] if id(d) in self._pending else self._embed(rgb, d.box) for d in fresh]
        taken: set[int] = set()
        if lost:
            thr = self.config.face_threshold
            cost = np.array([[float(np.linalg.norm(v - tr.centroid())) for v in vecs] for tr in lost])
            rows, cols = linear_sum_assignment(cost)
            for i, j in zip(rows, cols, strict=True):
                if cost[i, j] < thr:
                    assigned[lost[i].id] = fresh[j]
                    lost[i].embeddings.append((t, vecs[j]))
                    taken.add(j)
        for j, d in enumerate(fresh):
            if j not in taken:
                tr = FaceTrack(self._next_id, embeddings=[(t, vecs[j])])
                self._next_id += 1
                self._tracks.append(tr)
                assigned[tr.id] = d

    # -- results -----------------------------------------------------------------------------
    def tracks(self, confirmed: bool = True) -> list[FaceTrack]:
        """The tracks so far (with at least min_detections when `confirmed`), not merged."""
        least = self.config.min_detections if confirmed else 1
        return [tr for tr in self._tracks if len(tr.detections) >= least]

    def finish(self) -> list[FaceTrack]:
        """Confirmed tracks, those of one person merged (when `merge`), numbered 0.. by first appearance."""
        tracks = self.tracks()
        if self.config.merge:
            tracks = merge_tracks(tracks, self.config.face_threshold)
        return tracks


def distinct(dets: list[Detection]) -> list[Detection]:
    """One detection per face: a box mostly inside a better-scoring one (base before scan) is dropped."""
    kept: list[Detection] = []
    for d in sorted(dets, key=lambda d: (d.source != "base", -d.score)):
        if all(overlap(d.box, k.box) <= 0.5 for k in kept):
            kept.append(d)
    return kept


def merge_tracks(tracks: list[FaceTrack], threshold: float) -> list[FaceTrack]:
    """Tracks whose mean embeddings are all closer than `threshold` (complete linkage) and that are
    never on screen together, merged (closest pairs first); renumbered in order of appearance."""
    groups: list[list[FaceTrack]] = [[tr] for tr in sorted(tracks, key=lambda tr: tr.start)]

    def times(g: list[FaceTrack]) -> set[float]:
        return {round(x, 4) for tr in g for x in tr.times}

    def dist(a: list[FaceTrack], b: list[FaceTrack]) -> float:
        return max(float(np.linalg.norm(x.centroid() - y.centroid())) for x in a for y in b)

    while True:
        best: tuple[float, int, int] | None = None
        for i in range(len(groups)):
            for j in range(i + 1, len(groups)):
                if times(groups[i]) & times(groups[j]):
                    continue
                d = dist(groups[i], groups[j])
                if d < threshold and (best is None or d < best[0]):
                    best = (d, i, j)
        if best is None:
            break
        _, i, j = best
        groups[i] = groups[i] + groups[j]
        del groups[j]
    out = []
    for k, g in enumerate(sorted(groups, key=lambda g: min(tr.start for tr in g))):
        dets = sorted((d for tr in g for d in tr.detections), key=lambda d: d.t)
        embs = sorted((e for tr in g for e in tr.embeddings), key=lambda e: e[0])
        out.append(FaceTrack(k, dets, embs, sorted(tr.id for tr in g) if len(g) > 1 else []))
    return out
