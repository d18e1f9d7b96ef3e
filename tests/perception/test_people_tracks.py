"""Face tracks on synthetic frames made of real face photos (tests/data/faces): occlusion gaps,
a person seen for 1 s, one descriptor per second, merging one person's tracks only."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from egomem.errors import InputError
from egomem.perception.face import FaceBox
from egomem.perception.people import Detection, FaceTrack, FaceTracker, TrackerConfig, merge_tracks
from egomem.perception.people.geometry import chip, iou, overlap

FACES = Path(__file__).resolve().parents[1] / "data" / "faces"
W, H, FPS = 640, 360, 5.0
Photos = dict[str, Image.Image]


@pytest.fixture(scope="module")
def photos() -> dict[str, Image.Image]:
    return {
        "colin": Image.open(FACES / "Colin_Powell" / "Colin_Powell_0001.jpg").convert("RGB").crop((50, 40, 200, 210)),
        "ariel": Image.open(FACES / "Ariel_Sharon" / "Ariel_Sharon_0001.jpg").convert("RGB").crop((50, 40, 200, 210)),
    }


@pytest.fixture(scope="module")
def tracker_config() -> TrackerConfig:
    return TrackerConfig(fps=FPS, scan_px=640)  # the faces here are large: a cheap scan is enough


def frame(placed: list[tuple[Image.Image, int, int]]) -> np.ndarray:
    canvas = Image.new("RGB", (W, H), (110, 110, 110))
    for img, x, y in placed:
        canvas.paste(img, (x, y))
    return np.asarray(canvas)


def run(tracker: FaceTracker, scenes: list[list[tuple[Image.Image, int, int]]]) -> None:
    for i, placed in enumerate(scenes):
        tracker.update(i / FPS, frame(placed))


def test_track_survives_a_short_occlusion(photos: Photos, tracker_config: TrackerConfig) -> None:
    colin = photos["colin"]
    scenes = [[(colin, 40 + 8 * i, 100)] for i in range(15)]
    for i in (6, 7, 8):  # 0.6 s hidden, under max_gap_s
        scenes[i] = []
    tr = FaceTracker(config=tracker_config)
    run(tr, scenes)
    raw = tr.tracks(confirmed=False)
    assert len(raw) == 1
    assert len(raw[0].detections) == 12
    # One descriptor per second, not per frame (3 s of frames -> 3).
    assert len(raw[0].embeddings) == 3 and tr.stats.embeddings == 3
    assert all(d.opening is not None for d in raw[0].detections)


def test_long_absence_gives_two_tracks_that_merge(
    photos: dict[str, Image.Image], tracker_config: TrackerConfig
) -> None:
    colin = photos["colin"]
    scenes = [[(colin, 100, 100)]] * 5 + [[]] * 10 + [[(colin, 400, 120)]] * 5
    tr = FaceTracker(config=tracker_config)
    run(tr, scenes)
    assert len(tr.tracks()) == 2  # 2 s gone: past max_gap_s
    merged = tr.finish()
    assert len(merged) == 1 and merged[0].merged_from == [0, 1]
    assert len(merged[0].detections) == 10


def test_a_person_seen_for_one_second_gets_a_track(
    photos: dict[str, Image.Image], tracker_config: TrackerConfig
) -> None:
    colin, ariel = photos["colin"], photos["ariel"]
    scenes = [[(colin, 60, 100)] for _ in range(15)]
    for i in range(5, 10):  # Ariel for 5 frames = 1 s
        scenes[i] = [(colin, 60, 100), (ariel, 400, 90)]
    tr = FaceTracker(config=tracker_config)
    run(tr, scenes)
    tracks = tr.finish()
    assert len(tracks) == 2
    brief = min(tracks, key=lambda t: len(t.detections))
    assert len(brief.detections) == 5 and brief.visible_s(FPS) == pytest.approx(1.0)
    assert brief.start == pytest.approx(1.0) and brief.end == pytest.approx(1.8)


def test_two_people_in_one_place_at_different_times_stay_apart(
    photos: dict[str, Image.Image], tracker_config: TrackerConfig
) -> None:
    colin, ariel = photos["colin"], photos["ariel"]
    scenes = [[(ariel, 200, 100)]] * 5 + [[]] * 8 + [[(colin, 200, 100)]] * 5
    tr = FaceTracker(config=tracker_config)
    run(tr, scenes)
    assert len(tr.finish()) == 2


def test_a_cut_to_another_face_in_the_same_place_splits_the_track(
    photos: dict[str, Image.Image], tracker_config: TrackerConfig
) -> None:
    colin, ariel = photos["colin"], photos["ariel"]
    scenes = [[(ariel, 200, 100)]] * 5 + [[(colin, 200, 100)]] * 6
    tr = FaceTracker(config=tracker_config)
    run(tr, scenes)
    tracks = tr.finish()
    assert len(tracks) == 2
    assert all(len(t.detections) >= 5 for t in tracks)


def test_no_faces_and_bad_frames(tracker_config: TrackerConfig) -> None:
    tr = FaceTracker(config=tracker_config)
    tr.update(0.0, np.full((H, W, 3), 128, np.uint8))
    assert tr.finish() == []
    with pytest.raises(InputError, match="time order"):
        tr.update(0.0, np.zeros((H, W, 3), np.uint8))
    with pytest.raises(InputError):
        tr.update(1.0, np.zeros((4, 4, 3), np.uint8))
    with pytest.raises(InputError):
        FaceTracker(config=TrackerConfig(fps=0))


def _track(tid: int, times: list[float], vec: np.ndarray) -> FaceTrack:
    return FaceTrack(tid, [Detection(t, FaceBox(0, 10, 10, 0), 1.0, "base") for t in times], [(times[0], vec)])


def test_merge_needs_close_descriptors_and_no_shared_frame() -> None:
    a, b = np.zeros(128, np.float32), np.zeros(128, np.float32)
    b[0] = 0.3
    far = np.zeros(128, np.float32)
    far[0] = 0.9
    together = merge_tracks([_track(0, [0.0, 0.2], a), _track(1, [0.2, 0.4], b)], 0.6)
    assert len(together) == 2  # on screen together: two people
    apart = merge_tracks([_track(0, [0.0, 0.2], a), _track(1, [1.0, 1.2], b), _track(2, [2.0], far)], 0.6)
    assert len(apart) == 2 and apart[0].merged_from == [0, 1]


def test_geometry() -> None:
    a, b = FaceBox(0, 10, 10, 0), FaceBox(5, 15, 15, 5)
    assert iou(a, b) == pytest.approx(25 / 175)
    assert overlap(FaceBox(2, 8, 8, 2), a) == 1.0
    img = np.zeros((100, 100, 3), np.uint8)
    c, box = chip(img, FaceBox(40, 60, 60, 40), 100)
    assert box.right - box.left == 100 and c.shape[0] >= 100
    same, box2 = chip(img, FaceBox(0, 100, 100, 0), 100)
    assert same is img and box2 == FaceBox(0, 100, 100, 0)
