"""Lip activity: the inner-lip opening from dlib's 68-point landmarks, normalised by face size,
and its change over time.

`opening` is the mean of the three inner-lip gaps (landmarks 61-67, 62-66, 63-65) divided by
the distance between the eye centres (36-41 and 42-47): a closed mouth is ~0, a wide-open one
~0.5. Activity is |change| of the opening between consecutive samples of one track (at most
`max_dt` apart), so a mouth that stays open or closed is still and a talking one moves. It is
measured per sampling interval, so its scale belongs to the tracker's fps (5 by default; the
thresholds in link.py assume it). Frames further apart than 1.5 intervals are not compared: video
sampled at 2 fps gives no lip activity, and links then wait.
Faces smaller than `min_face_px` are not measured (landmarks there are mostly guesswork); small
ones above it are upscaled first (`geometry.chip`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from egomem.errors import InputError
from egomem.perception.face import FaceBox, face_models_dir
from egomem.perception.people.geometry import chip, size

LANDMARKS_68 = "shape_predictor_68_face_landmarks.dat"
INNER_LIPS = ((61, 67), (62, 66), (63, 65))


def mouth_opening(points: np.ndarray) -> float:
    """Inner-lip opening over the inter-ocular distance, from (68, 2) landmark points."""
    p = np.asarray(points, dtype=np.float64)
    if p.shape != (68, 2):
        raise InputError(f"expected 68 landmark points, got shape {p.shape}")
    gap = float(np.mean([np.linalg.norm(p[a] - p[b]) for a, b in INNER_LIPS]))
    iod = float(np.linalg.norm(p[36:42].mean(axis=0) - p[42:48].mean(axis=0)))
    return gap / iod if iod > 1e-6 else float("nan")


class MouthMeter:
    """Measures the mouth opening of a face box; the 68-point model loads on first use."""

    def __init__(self, models_dir: Path | None = None, min_face_px: int = 40, chip_px: int = 120) -> None:
        self._models_dir = models_dir
        self.min_face_px = min_face_px
        self.chip_px = chip_px
        self._lock = threading.Lock()
        self._predictor: Any = None

    def _load(self) -> Any:
        with self._lock:
            if self._predictor is None:
                import dlib

                path = (self._models_dir or face_models_dir()) / LANDMARKS_68
                if not path.is_file():
                    raise InputError(f"dlib model file missing: {path}")
                self._predictor = dlib.shape_predictor(str(path))
            return self._predictor

    def opening(self, rgb: np.ndarray, box: FaceBox) -> float | None:
        """The opening of the face in `box`, or None when the face is too small to measure."""
        import dlib

        if size(box) < self.min_face_px:
            return None
        predictor = self._load()
        img, b = chip(rgb, box, self.chip_px)
        with self._lock:
            shape = predictor(img, dlib.rectangle(b.left, b.top, b.right, b.bottom))
        pts = np.array([(shape.part(i).x, shape.part(i).y) for i in range(68)], dtype=np.float64)
        value = mouth_opening(pts)
        return None if not np.isfinite(value) else value


def activity(samples: Sequence[tuple[float, float | None]], max_dt: float) -> list[tuple[float, float]]:
    """(time, |change of opening|) between consecutive measured samples at most `max_dt` apart,
    timed at the later sample. `samples` are (time, opening or None) in time order."""
    out: list[tuple[float, float]] = []
    prev: tuple[float, float] | None = None
    for t, v in samples:
        if v is None:
            prev = None
            continue
        if prev is not None and t - prev[0] <= max_dt + 1e-6:
            out.append((t, abs(v - prev[1])))
        prev = (t, v)
    return out


def mean_activity(deltas: Sequence[tuple[float, float]], start: float, end: float) -> tuple[float, int]:
    """Mean activity of the changes timed in [start, end), and how many there were (nan, 0 if none)."""
    vals = [d for t, d in deltas if start <= t < end]
    return (float(np.mean(vals)), len(vals)) if vals else (float("nan"), 0)
