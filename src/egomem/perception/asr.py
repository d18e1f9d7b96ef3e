"""Speech recognition behind one interface: pocketsphinx (offline default) and faster-whisper.

pocketsphinx ships its en-us acoustic model, dictionary and language model inside the
wheel. The faster-whisper backend loads a CTranslate2 Whisper model only from a local
directory (config or argument); it never downloads: a missing directory is an InputError
telling the user to fetch the model themselves.
"""

from __future__ import annotations

import abc
import re
import threading
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from egomem.errors import InputError
from egomem.perception.audio import SAMPLE_RATE, to_mono16k


class Transcriber(Protocol):
    """What the dialog and memory processes need from ASR (every ASRBackend fits)."""

    def transcribe(self, audio: np.ndarray, sample_rate: int = SAMPLE_RATE) -> str: ...


class ASRBackend(abc.ABC):
    name: str

    @abc.abstractmethod
    def _transcribe16k(self, audio: np.ndarray) -> str: ...

    def transcribe(self, audio: np.ndarray, sample_rate: int = SAMPLE_RATE) -> str:
        """Lower-case text of the speech in `audio` ("" for silence or audio too short to decode)."""
        a = to_mono16k(audio, sample_rate)
        if a.size < SAMPLE_RATE // 10 or float(np.max(np.abs(a), initial=0.0)) < 1e-4:
            return ""
        return normalise_text(self._transcribe16k(a))


class PocketSphinxASR(ASRBackend):
    name = "pocketsphinx"

    def __init__(self) -> None:
        self._decoder: Any = None
        self._lock = threading.Lock()

    def _transcribe16k(self, audio: np.ndarray) -> str:
        pcm = (np.clip(audio, -1.0, 1.0) * 32767).astype("<i2").tobytes()
        with self._lock:
            if self._decoder is None:
                from pocketsphinx import Decoder

                self._decoder = Decoder(samprate=SAMPLE_RATE, loglevel="FATAL")
            d = self._decoder
            d.start_utt()
            d.process_raw(pcm, full_utt=True)
            d.end_utt()
            hyp = d.hyp()
        return hyp.hypstr if hyp is not None else ""


class FasterWhisperASR(ASRBackend):
    """A CTranslate2 Whisper model from a local directory (with model.bin and config.json)."""

    name = "faster-whisper"

    def __init__(self, model_dir: str | Path, *, compute_type: str = "int8", beam_size: int = 5) -> None:
        p = Path(model_dir).expanduser() if str(model_dir) else None
        if p is None or not (p / "model.bin").is_file():
            raise InputError(
                f"no CTranslate2 Whisper model in {model_dir!s:.200}: download one (e.g. Systran/faster-whisper-small) "
                "to a local directory and give its path; egomem never downloads models"
            )
        try:
            from faster_whisper import WhisperModel
        except ImportError as exc:
            raise InputError("faster-whisper is not installed: pip install 'egomem[whisper]'") from exc
        self._model = WhisperModel(str(p), device="cpu", compute_type=compute_type, local_files_only=True)
        self._beam = beam_size
        self._lock = threading.Lock()

    def _transcribe16k(self, audio: np.ndarray) -> str:
        with self._lock:
            segments, _ = self._model.transcribe(audio, beam_size=self._beam, language="en")
            return " ".join(s.text for s in segments)


def make_asr(backend: str = "pocketsphinx", model_dir: str | Path = "") -> ASRBackend:
    if backend == "pocketsphinx":
        return PocketSphinxASR()
    if backend in ("faster-whisper", "whisper"):
        return FasterWhisperASR(model_dir)
    raise InputError(f"unknown ASR backend {backend!r}; use pocketsphinx or faster-whisper")


def normalise_text(text: str) -> str:
    """Lower case, letters/digits/apostrophes only, single spaces (LibriSpeech reference style)."""
    t = re.sub(r"[^a-z0-9' ]+", " ", text.lower())
    return " ".join(w.strip("'") for w in t.split() if w.strip("'"))


def word_errors(ref: str, hyp: str) -> tuple[int, int]:
    """(edit distance in words, reference length) after normalisation."""
    r, h = normalise_text(ref).split(), normalise_text(hyp).split()
    prev = list(range(len(h) + 1))
    for i, rw in enumerate(r, 1):
        cur = [i] + [0] * len(h)
        for j, hw in enumerate(h, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (rw != hw))
        prev = cur
    return prev[-1], len(r)


def wer(refs: list[str], hyps: list[str]) -> float:
    """Corpus word error rate: total edits over total reference words."""
    if len(refs) != len(hyps):
        raise InputError("wer needs as many hypotheses as references")
    errs = [word_errors(r, h) for r, h in zip(refs, hyps, strict=True)]
    total = sum(n for _, n in errs)
    return sum(e for e, _ in errs) / total if total else 0.0
