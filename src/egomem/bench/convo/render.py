"""Rendering spoken scenes: offline TTS voices, real face photos, one mp4 per day.

Voices are Debian's Festival (kal, ked, slt) and espeak-ng variants; Piper's "joe" is the
assistant's own voice (egomem.dialog.speech) and is never given to a user. The photos
are real ones from ../shared/data. `write_mp4` is the writer the demo assets use.
"""

from __future__ import annotations

import csv
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import av
import numpy as np
from PIL import Image

from egomem.errors import InputError
from egomem.perception.audio import SAMPLE_RATE, load_audio

W, H, FPS = 640, 480, 2


@dataclass(frozen=True)
class Voice:
    engine: str  # festival | espeak-ng
    name: str
    gender: str  # f | m

    @property
    def id(self) -> str:
        return f"{self.engine}:{self.name}"


VOICES = (
    Voice("festival", "cmu_us_slt_arctic_hts", "f"),
    Voice("festival", "kal_diphone", "m"),
    Voice("festival", "ked_diphone", "m"),
    Voice("espeak-ng", "en-us+f2", "f"),
    Voice("espeak-ng", "en-gb+f3", "f"),
    Voice("espeak-ng", "en-us+f4", "f"),
    Voice("espeak-ng", "en-gb-x-rp+m3", "m"),
    Voice("espeak-ng", "en-us+m1", "m"),
)
_FESTIVAL_DIRS = {"cmu_us_slt_arctic_hts": "us", "kal_diphone": "english", "ked_diphone": "english"}


def installed_voices() -> list[Voice]:
    """The voices whose engine (and, for Festival, whose voice package) is installed here."""
    out = []
    for v in VOICES:
        if v.engine == "festival":
            if (
                shutil.which("text2wave")
                and Path("/usr/share/festival/voices", _FESTIVAL_DIRS[v.name], v.name).is_dir()
            ):
                out.append(v)
        elif shutil.which(v.engine):
            out.append(v)
    return out


def synthesize(text: str, voice: Voice, tmp: Path) -> np.ndarray:
    """16 kHz mono float32 speech of `text` in `voice`."""
    wav = tmp / "tts.wav"
    if voice.engine == "festival":
        cmd = ["text2wave", "-eval", f"(voice_{voice.name})", "-o", str(wav)]
        stdin: bytes | None = text.encode()
    else:
        cmd = ["espeak-ng", "-v", voice.name, "-s", "155", "-w", str(wav), text]
        stdin = None
    try:
        subprocess.run(cmd, input=stdin, check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise InputError(f"text-to-speech with {voice.id} failed: {exc}") from exc
    return load_audio(wav)


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
