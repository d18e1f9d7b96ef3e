"""Face detection and 128-d embedding with dlib (HOG detector, 5-point landmarks, ResNet encoder).

The model files ship in the `face-recognition-models` wheel. We locate them with
`importlib.util.find_spec` and never import that package: its `__init__` needs
`pkg_resources`, which setuptools >= 81 no longer provides.

Detection resolution is chosen per image: small images (LFW's 250x250, 150x150 crops)
are upsampled, because HOG misses faces under ~80 px; large photos are detected on a
downscaled copy (HOG time grows with pixels) and the boxes mapped back, so landmarks
and the embedding always use full-resolution pixels.

The primary face is the one with the largest `area * centrality`, where centrality is
`1 - 0.5 * d` and `d` is the distance of the box centre from the frame centre divided
by the half-diagonal (0 at the centre, 1 in a corner): a face twice as large wins
unless it sits in a corner and the other one is central.
"""

from __future__ import annotations

import importlib.util
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from egomem.config import FaceConfig
from egomem.encoders import DLIB_FACE
from egomem.errors import InputError
from egomem.perception.types import FaceObservation

FACE_MODEL = DLIB_FACE.name
FACE_DIM = DLIB_FACE.dim


def face_models_dir() -> Path:
    spec = importlib.util.find_spec("face_recognition_models")
    if spec is None or not spec.submodule_search_locations:
        raise InputError("the face-recognition-models package is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / "models"
    if not path.is_dir():
        raise InputError(f"dlib model files not found under {path}")
    return path


def to_rgb_uint8(image: Any, *, bgr: bool = False) -> np.ndarray:
    """Any image array (gray HxW, HxWx1, RGB, RGBA, BGR with bgr=True, float in [0,1]) to contiguous RGB uint8."""
    if image is None:
        raise InputError("no image given")
    a = np.asarray(image)
    if a.size == 0 or a.ndim not in (2, 3):
        raise InputError(f"image must be a non-empty HxW or HxWxC array, got shape {a.shape}")
    if a.ndim == 3 and a.shape[2] not in (1, 3, 4):
        raise InputError(f"image must have 1, 3 or 4 channels, got {a.shape[2]}")
    if min(a.shape[0], a.shape[1]) < 8:
        raise InputError(f"image too small: {a.shape[1]}x{a.shape[0]}")
    if a.dtype == np.bool_ or not (np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating)):
        raise InputError(f"unsupported image type {a.dtype}")
    if np.issubdtype(a.dtype, np.floating):
        if not np.all(np.isfinite(a)):
            raise InputError("image contains NaN or infinite values")
        a = a * 255.0 if a.max(initial=0.0) <= 1.0 else a  # float images are usually in [0, 1]
    a = np.clip(a, 0, 255).astype(np.uint8) if a.dtype != np.uint8 else a
    if a.ndim == 2:
        a = np.repeat(a[:, :, None], 3, axis=2)
    elif a.shape[2] == 1:
        a = np.repeat(a, 3, axis=2)
    elif a.shape[2] == 4:
        a = a[:, :, :3]  # drop alpha
    if bgr:
        a = a[:, :, ::-1]
    return np.ascontiguousarray(a)


def load_image(path: str | Path) -> np.ndarray:
    """Read an image file as RGB uint8, or raise InputError (missing, corrupt, not an image)."""
    from PIL import Image, UnidentifiedImageError

    p = Path(path)
    if not p.is_file():
        raise InputError(f"image file not found: {p}")
    try:
        with Image.open(p) as im:
            im.load()
            return to_rgb_uint8(np.asarray(im.convert("RGB")))
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise InputError(f"cannot read image {p.name}: {exc}") from exc


@dataclass(frozen=True)
class FaceBox:
    top: int
    right: int
    bottom: int
    left: int

    @property
    def area(self) -> int:
        return max(0, self.bottom - self.top) * max(0, self.right - self.left)

    def as_tuple(self) -> tuple[int, int, int, int]:
        return (self.top, self.right, self.bottom, self.left)


def primary_index(boxes: list[FaceBox], height: int, width: int) -> int:
    """Index of the largest, most central face (see the module docstring)."""
    cy, cx, half_diag = height / 2, width / 2, float(np.hypot(height, width)) / 2
    best, best_score = 0, -1.0
    for i, b in enumerate(boxes):
        d = float(np.hypot((b.top + b.bottom) / 2 - cy, (b.left + b.right) / 2 - cx)) / half_diag
        score = b.area * (1.0 - 0.5 * min(d, 1.0))
        if score > best_score:
            best, best_score = i, score
    return best


class FaceEncoder:
    """Detect, pick and embed faces. Models load on first use; one lock per dlib model object."""

    def __init__(self, config: FaceConfig | None = None, models_dir: Path | None = None) -> None:
        self.config = config or FaceConfig()
        self._models_dir = models_dir
        self._load_lock = threading.Lock()
        self._detect_lock = threading.Lock()
        self._embed_lock = threading.Lock()
        self._detector: Any = None
        self._shape: Any = None
        self._encoder: Any = None

    def _ensure_loaded(self) -> None:
        if self._encoder is not None:
            return
        with self._load_lock:
            if self._encoder is not None:
                return
            import dlib

            d = self._models_dir or face_models_dir()
            files = {
                n: d / n for n in ("shape_predictor_5_face_landmarks.dat", "dlib_face_recognition_resnet_model_v1.dat")
            }
            for f in files.values():
                if not f.is_file():
                    raise InputError(f"dlib model file missing: {f}")
            self._detector = dlib.get_frontal_face_detector()
            self._shape = dlib.shape_predictor(str(files["shape_predictor_5_face_landmarks.dat"]))
            self._encoder = dlib.face_recognition_model_v1(str(files["dlib_face_recognition_resnet_model_v1.dat"]))

    def load(self) -> None:
        """Load dlib's models now instead of on first use."""
        self._ensure_loaded()

    def detect(self, image: Any, *, bgr: bool = False) -> list[FaceBox]:
        """Face boxes in full-resolution pixels, largest first (empty list: no face)."""
        rgb = to_rgb_uint8(image, bgr=bgr)
        return self._detect_rgb(rgb)

    def _detect_rgb(self, rgb: np.ndarray) -> list[FaceBox]:
        self._ensure_loaded()
        h, w = rgb.shape[:2]
        cfg = self.config
        scale = 1.0
        small = rgb
        if max(h, w) > cfg.detect_max_px:
            scale = cfg.detect_max_px / max(h, w)
            small = _resize(rgb, scale)
        upsample = cfg.upsample if max(h, w) < cfg.small_image_px else 0
        with self._detect_lock:
            rects = list(self._detector(small, upsample))
            # One more pass with upsampling before giving up: it finds small or distant faces.
            if not rects and cfg.retry_upsample and upsample < 2:
                rects = list(self._detector(small, upsample + 1))
        boxes = []
        for r in rects:
            b = FaceBox(
                max(0, round(r.top() / scale)),
                min(w, round(r.right() / scale)),
                min(h, round(r.bottom() / scale)),
                max(0, round(r.left() / scale)),
            )
            if min(b.bottom - b.top, b.right - b.left) >= cfg.min_face_px * min(1.0, max(h, w) / cfg.small_image_px):
                boxes.append(b)
        return sorted(boxes, key=lambda b: -b.area)

    def detect_scored(self, rgb: np.ndarray, upsample: int = 0, threshold: float = 0.0) -> list[tuple[FaceBox, float]]:
        """Every HOG detection in `rgb` (RGB uint8, used as given: no resizing) with its score, at
        `upsample` pyramid doublings; `threshold` adjusts dlib's score cut (0 is dlib's own)."""
        self._ensure_loaded()
        h, w = rgb.shape[:2]
        with self._detect_lock:
            rects, scores, _ = self._detector.run(rgb, upsample, threshold)
        out = []
        for r, s in zip(rects, scores, strict=True):
            b = FaceBox(max(0, r.top()), min(w, r.right()), min(h, r.bottom()), max(0, r.left()))
            if b.bottom > b.top and b.right > b.left:
                out.append((b, float(s)))
        return out

    def embed_box(self, rgb: np.ndarray, box: FaceBox) -> np.ndarray:
        """128-d descriptor of the face in `box` (aligned by the 5-point landmarks)."""
        import dlib

        self._ensure_loaded()
        rect = dlib.rectangle(box.left, box.top, box.right, box.bottom)
        with self._embed_lock:
            shape = self._shape(rgb, rect)
            vec = self._encoder.compute_face_descriptor(rgb, shape, self.config.num_jitters)
        return np.asarray(vec, dtype=np.float32)

    def observe(self, image: Any, *, bgr: bool = False, frame_index: int = 0) -> FaceObservation | None:
        """The primary face of a frame, embedded; None when there is no face."""
        rgb = to_rgb_uint8(image, bgr=bgr)
        boxes = self._detect_rgb(rgb)
        if not boxes:
            return None
        box = boxes[primary_index(boxes, rgb.shape[0], rgb.shape[1])]
        vector = self.embed_box(rgb, box)
        return FaceObservation(vector=vector, box=box.as_tuple(), frame_index=frame_index, faces_in_view=len(boxes))

    def observe_all(self, image: Any, *, bgr: bool = False, frame_index: int = 0) -> list[FaceObservation]:
        """Every face of a frame, embedded, largest first."""
        rgb = to_rgb_uint8(image, bgr=bgr)
        return [
            FaceObservation(vector=self.embed_box(rgb, b), box=b.as_tuple(), frame_index=frame_index)
            for b in self._detect_rgb(rgb)
        ]


def _resize(rgb: np.ndarray, scale: float) -> np.ndarray:
    from PIL import Image

    h, w = rgb.shape[:2]
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    return np.asarray(Image.fromarray(rgb).resize(size, Image.Resampling.BILINEAR))
