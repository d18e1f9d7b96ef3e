"""Offline TTS voices for people other than the assistant: Festival and espeak-ng variants.

The assistant's own voice is `egomem.dialog.speech` (Piper "joe", espeak-ng); these voices
are never given to it. Both the conversation benchmark's renderer (bench/convo/render.py)
and the training-data builder (egomem_training.data) speak users' lines with them, so a
voice means the same thing in a benchmark scene and in a training stream.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from egomem.errors import InputError
from egomem.media import load_audio


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


def installed_voices(voices: tuple[Voice, ...] = VOICES) -> list[Voice]:
    """The voices whose engine (and, for Festival, whose voice package) is installed here."""
    out = []
    for v in voices:
        if v.engine == "festival":
            folder = _FESTIVAL_DIRS.get(v.name)
            if shutil.which("text2wave") and folder and Path("/usr/share/festival/voices", folder, v.name).is_dir():
                out.append(v)
        elif shutil.which(v.engine):
            out.append(v)
    return out


def synthesize(text: str, voice: Voice, tmp: Path) -> np.ndarray:
    """16 kHz mono float32 speech of `text` in `voice` (`tmp`: a scratch folder)."""
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
