"""Mouth opening from 68 landmarks, lip activity over time, and the meter on a real face."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from egomem.errors import InputError
from egomem.perception.face import FaceBox, FaceEncoder, load_image
from egomem.perception.people import MouthMeter, activity, mean_activity, mouth_opening

FACES = Path(__file__).resolve().parents[1] / "data" / "faces"


def landmarks(gap: float, eye_distance: float = 60.0) -> np.ndarray:
    p = np.zeros((68, 2))
    p[36:42] = (100.0, 100.0)
    p[42:48] = (100.0 + eye_distance, 100.0)
    for top, bottom in ((61, 67), (62, 66), (63, 65)):
        p[top] = (130.0, 160.0)
        p[bottom] = (130.0, 160.0 + gap)
    return p


def test_mouth_opening_is_the_inner_gap_over_the_eye_distance() -> None:
    assert mouth_opening(landmarks(0.0)) == 0.0
    assert mouth_opening(landmarks(12.0)) == pytest.approx(0.2)
    assert mouth_opening(landmarks(24.0, eye_distance=120.0)) == pytest.approx(0.2)  # scale-free
    with pytest.raises(InputError):
        mouth_opening(np.zeros((5, 2)))


def test_activity_is_the_change_between_close_samples() -> None:
    samples = [(0.0, 0.1), (0.2, 0.3), (0.4, None), (0.6, 0.2), (0.8, 0.25), (2.0, 0.9)]
    acts = activity(samples, max_dt=0.3)
    assert acts == [(0.2, pytest.approx(0.2)), (0.8, pytest.approx(0.05))]  # gaps and unmeasured break the chain
    assert mean_activity(acts, 0.0, 1.0) == (pytest.approx(0.125), 2)
    m, n = mean_activity(acts, 5.0, 6.0)
    assert n == 0 and np.isnan(m)


def test_meter_on_a_real_face_and_on_a_tiny_box() -> None:
    img = load_image(FACES / "Colin_Powell" / "Colin_Powell_0001.jpg")
    box = FaceEncoder().detect(img)[0]
    meter = MouthMeter()
    v = meter.opening(img, box)
    assert v is not None and 0.0 <= v < 0.6
    assert meter.opening(img, FaceBox(10, 30, 30, 10)) is None  # 20 px: too small to read
