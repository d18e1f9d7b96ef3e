"""Face detection + embedding on real LFW samples, and bad-input handling."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from egomem.errors import InputError
from egomem.perception.face import FaceBox, FaceEncoder, load_image, primary_index, to_rgb_uint8


@pytest.fixture(scope="module")
def enc() -> FaceEncoder:
    return FaceEncoder()


@pytest.fixture(scope="module")
def faces() -> dict[str, np.ndarray]:
    root = Path(__file__).resolve().parents[1] / "data" / "faces"
    return {p.stem: load_image(p) for p in sorted(root.glob("*/*.jpg"))}


@pytest.fixture(scope="module")
def vecs(enc: FaceEncoder, faces: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    out = {}
    for k, img in faces.items():
        obs = enc.observe(img)
        assert obs is not None, f"no face found in {k}"
        out[k] = obs.vector
    return out


def test_same_person_matches_different_does_not(vecs: dict[str, np.ndarray]) -> None:
    thr = 0.6
    same_a = np.linalg.norm(vecs["Ariel_Sharon_0001"] - vecs["Ariel_Sharon_0002"])
    same_c = np.linalg.norm(vecs["Colin_Powell_0001"] - vecs["Colin_Powell_0002"])
    diff = np.linalg.norm(vecs["Ariel_Sharon_0001"] - vecs["Colin_Powell_0001"])
    assert same_a < thr and same_c < thr
    assert diff > thr
    assert vecs["Ariel_Sharon_0001"].shape == (128,)


def test_gray_rgba_bgr_and_float_inputs_give_the_same_person(
    enc: FaceEncoder, faces: dict[str, np.ndarray], vecs: dict[str, np.ndarray]
) -> None:
    img = faces["Colin_Powell_0001"]
    ref = vecs["Colin_Powell_0001"]
    gray = img.mean(axis=2).astype(np.uint8)
    rgba = np.concatenate([img, np.full((*img.shape[:2], 1), 255, np.uint8)], axis=2)
    for variant, kw in ((gray, {}), (rgba, {}), (img[:, :, ::-1].copy(), {"bgr": True}), (img / 255.0, {})):
        obs = enc.observe(variant, **kw)
        assert obs is not None
        assert np.linalg.norm(obs.vector - ref) < 0.3


def test_no_face_is_none_and_bad_images_raise(enc: FaceEncoder, tmp_path: Path) -> None:
    assert enc.observe(np.full((200, 200, 3), 127, np.uint8)) is None
    for bad in (
        np.zeros((0, 0, 3), np.uint8),
        np.zeros((4, 4, 3), np.uint8),
        np.zeros((20, 20, 5), np.uint8),
        np.full((20, 20), np.nan),
        None,
    ):
        with pytest.raises(InputError):
            enc.observe(bad)
    corrupt = tmp_path / "x.jpg"
    corrupt.write_bytes(b"\xff\xd8not a jpeg")
    with pytest.raises(InputError):
        load_image(corrupt)
    with pytest.raises(InputError):
        load_image(tmp_path / "missing.png")


def test_primary_face_prefers_large_then_central() -> None:
    small_centre = FaceBox(90, 110, 110, 90)
    big_corner = FaceBox(0, 60, 60, 0)
    big_centre = FaceBox(70, 130, 130, 70)
    assert primary_index([small_centre, big_corner], 200, 200) == 1  # 9x the area beats centrality
    assert primary_index([big_corner, big_centre], 200, 200) == 1  # same size: the central one


def test_to_rgb_shapes() -> None:
    assert to_rgb_uint8(np.zeros((10, 12), np.uint8)).shape == (10, 12, 3)
    assert to_rgb_uint8(np.zeros((10, 12, 1), np.uint16)).dtype == np.uint8
