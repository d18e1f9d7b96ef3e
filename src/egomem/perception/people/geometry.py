"""Box geometry shared by the tracker and the lip reader: overlap, centre distance, resizing, and
face chips (a small face cut out and upscaled before landmarks or the descriptor see it)."""

from __future__ import annotations

import numpy as np

from egomem.perception.face import FaceBox


def iou(a: FaceBox, b: FaceBox) -> float:
    ih = min(a.bottom, b.bottom) - max(a.top, b.top)
    iw = min(a.right, b.right) - max(a.left, b.left)
    if ih <= 0 or iw <= 0:
        return 0.0
    inter = ih * iw
    return inter / float(a.area + b.area - inter)


def overlap(a: FaceBox, b: FaceBox) -> float:
    """Intersection over the smaller box: 1 when one box lies inside the other (HOG finds one face
    as two boxes of different sizes at different pyramid levels; IoU misses that)."""
    ih = min(a.bottom, b.bottom) - max(a.top, b.top)
    iw = min(a.right, b.right) - max(a.left, b.left)
    if ih <= 0 or iw <= 0:
        return 0.0
    return ih * iw / float(max(min(a.area, b.area), 1))


def size(b: FaceBox) -> float:
    """The face's side in pixels (HOG boxes are square up to rounding)."""
    return float(np.sqrt(max(b.area, 1)))


def centre_distance(a: FaceBox, b: FaceBox) -> float:
    """Distance between the box centres in units of `a`'s size."""
    dy = (a.top + a.bottom - b.top - b.bottom) / 2
    dx = (a.left + a.right - b.left - b.right) / 2
    return float(np.hypot(dx, dy)) / size(a)


def scale_box(b: FaceBox, s: float, height: int, width: int) -> FaceBox:
    """A box found on an image resized by `s`, in the original image's pixels."""
    top, right, bottom, left = (round(x / s) for x in b.as_tuple())
    return FaceBox(max(0, top), min(width, right), min(height, bottom), max(0, left))


def resize(rgb: np.ndarray, s: float) -> np.ndarray:
    """`rgb` scaled by `s` (Lanczos when enlarging: HOG and the landmarks see sharper edges than
    with dlib's own bilinear pyramid)."""
    from PIL import Image

    if abs(s - 1.0) < 1e-6:
        return rgb
    h, w = rgb.shape[:2]
    f = Image.Resampling.LANCZOS if s > 1 else Image.Resampling.BILINEAR
    return np.asarray(Image.fromarray(rgb).resize((max(1, round(w * s)), max(1, round(h * s))), f))


def chip(rgb: np.ndarray, box: FaceBox, min_px: int, margin: float = 0.6) -> tuple[np.ndarray, FaceBox]:
    """The face with `margin` x its size around it, upscaled so the face is at least `min_px` wide
    (unchanged when it already is), and the box in the chip's pixels."""
    h, w = rgb.shape[:2]
    side = size(box)
    if side >= min_px:
        return rgb, box
    m = round(margin * side)
    top, left = max(0, box.top - m), max(0, box.left - m)
    bottom, right = min(h, box.bottom + m), min(w, box.right + m)
    s = min_px / side
    crop = resize(np.ascontiguousarray(rgb[top:bottom, left:right]), s)
    y = [round((v - top) * s) for v in (box.top, box.bottom)]
    x = [round((v - left) * s) for v in (box.left, box.right)]
    inner = FaceBox(y[0], x[1], y[1], x[0])
    return np.ascontiguousarray(crop), inner
