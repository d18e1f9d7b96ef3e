"""Rendering spoken scenes: offline TTS voices, real face photos, one mp4 per day.

Voices are Debian's Festival (kal, ked, slt) and espeak-ng variants (egomem_eval.voices,
shared with the training-data builder); Piper's "joe" is the assistant's own voice
(egomem.dialog.speech) and is never given to a user. The photos
are real ones from ../shared/data. `write_mp4` is the writer the demo assets use.
"""

from __future__ import annotations

import csv
import tempfile
from dataclasses import dataclass
from pathlib import Path

import av
import numpy as np
from PIL import Image

from egomem.errors import InputError
from egomem.perception.audio import SAMPLE_RATE
from egomem_eval.voices import VOICES, Voice, installed_voices, synthesize

__all__ = [
    "VOICES",
    "Face",
    "Voice",
    "face_pool",
    "frame_for",
    "installed_voices",
    "silence",
    "synthesize",
    "temp_dir",
    "write_mp4",
]

W, H, FPS = 640, 480, 2


@dataclass(frozen=True)
class Face:
    label: str  # dataset/identity
    photos: tuple[Path, ...]


def face_pool(shared: Path) -> list[Face]:
    """Identities with at least one single-person photo, from the face folders of ../shared/data."""
    faces: list[Face] = []
    lfw = shared / "faces_lfw_subset_10x10" / "images"
    if lfw.is_dir():
        faces += [Face(f"lfw/{d.name}", tuple(sorted(d.glob("*.jpg")))) for d in sorted(lfw.iterdir()) if d.is_dir()]
    for folder, id_col in (("faces_deepface", "identity"), ("faces_face_recognition", "identity")):
        index = shared / folder / ("identities.csv" if folder == "faces_deepface" else "labels.csv")
        if not index.is_file():
            continue
        by_id: dict[str, list[Path]] = {}
        with open(index, newline="") as f:
            for row in csv.DictReader(f):
                if "|" not in row[id_col]:  # group photos hold several people
                    by_id.setdefault(row[id_col], []).append(shared / folder / row["file"])
        faces += [Face(f"{folder}/{k}", tuple(v)) for k, v in sorted(by_id.items())]
    if not faces:
        raise InputError(f"no face photos found in {shared} (faces_lfw_subset_10x10, faces_deepface, ...)")
    return faces


def frame_for(photo: Path | None) -> np.ndarray:
    """A 640x480 camera frame: the photo centred on grey, or an empty grey scene."""
    canvas = Image.new("RGB", (W, H), (96, 96, 96))
    if photo is not None:
        img = Image.open(photo).convert("RGB")
        img.thumbnail((W - 80, H - 60))
        canvas.paste(img, ((W - img.width) // 2, (H - img.height) // 2))
    return np.asarray(canvas)


def write_mp4(
    path: Path,
    pcm: np.ndarray,
    spans: list[tuple[float, float, np.ndarray]],
    *,
    preset: str = "veryfast",
) -> None:
    """Write 16 kHz mono `pcm` and, at 2 fps, the frame of the span each instant falls in
    (`spans`: (start_s, end_s, image); the last span's image after the end)."""
    duration = pcm.size / SAMPLE_RATE
    tmp = path.with_suffix(".part.mp4")
    with av.open(str(tmp), "w") as out:
        vs = out.add_stream("libx264", rate=FPS)
        vs.width, vs.height, vs.pix_fmt = W, H, "yuv420p"
        vs.options = {"crf": "30", "preset": preset}
        as_ = out.add_stream("aac", rate=SAMPLE_RATE)
        as_.layout = "mono"
        as_.bit_rate = 96_000  # near-transparent: the ASR should hear what was said
        for i in range(int(np.ceil(duration * FPS))):
            ft = i / FPS
            img = next((f for a, b, f in spans if a <= ft < b), spans[-1][2])
            for pkt in vs.encode(av.VideoFrame.from_ndarray(img, format="rgb24")):
                out.mux(pkt)
        for pkt in vs.encode():
            out.mux(pkt)
        for i in range(0, pcm.size, 1024):
            af = av.AudioFrame.from_ndarray(pcm[i : i + 1024][None, :], format="flt", layout="mono")
            af.sample_rate = SAMPLE_RATE
            af.pts = i
            for pkt in as_.encode(af):
                out.mux(pkt)
        for pkt in as_.encode():
            out.mux(pkt)
    tmp.replace(path)


def silence(seconds: float) -> np.ndarray:
    return np.zeros(int(seconds * SAMPLE_RATE), np.float32)


def temp_dir() -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix="egomem-tts-")
