"""Whisper ASR through faster-whisper (CTranslate2, int8 on CPU): the default backend.

The weights come from pip packages (egomem.weights: "base" is assembled once into the data
directory, "tiny.en" is used where pip put it), or from a local CTranslate2 directory;
nothing is ever downloaded (`local_files_only`). A model is loaded once per process and
shared by every backend instance that asks for the same files and settings.

Besides the lower-case `transcribe` of every backend, Whisper keeps casing and
punctuation (`transcribe_cased`: names and questions are easier to see downstream) and
gives word timestamps (`transcribe_words`).

Repetition guard (Whisper base loops on overlapping or clipped speech: "No, I didn't" x40, the
rest of the turn lost). Every decode is beam search at temperature 0, so the same audio gives the
same text in every run and process: no conditioning on previous text (a loop in one 30 s window
cannot seed the next); a decode whose text repeats a phrase of 1-12 words more than `max_repeats`
times back to back, or whose window text compresses more than 2.4x (zlib, Whisper's own
threshold), is decoded once more with a repetition penalty (still beam search, no sampling);
if that one loops too, the less repetitive of the two is kept with every such run cut to
its first copy. Sampling with a fixed seed was not used: CTranslate2 seeds one generator per
thread once, so a sampled decode would depend on what the thread decoded before.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from egomem import weights
from egomem.errors import ConfigError
from egomem.perception.asr import (
    LOOP_REPEATS,
    ASRBackend,
    Word,
    collapsed_indices,
    decodable16k,
    longest_repeat,
    repeat_keys,
)
from egomem.perception.audio import SAMPLE_RATE

if TYPE_CHECKING:
    from egomem.providers import BuildContext, WhisperConfig

_MODELS: dict[tuple[str, str, int], Any] = {}
_MODELS_LOCK = threading.Lock()
# Whisper's own mark of a repetitive window (text length over its zlib-compressed length).
COMPRESSION_RATIO_LOOP = 2.4


def resolve_model_dir(model: str, data_dir: Path | None = None) -> Path:
    """A packaged model name ("base", "tiny.en") or a local CTranslate2 directory -> the directory."""
    if model in weights.MODELS:
        return weights.ensure_kind(model, "whisper", data_dir, "Whisper model", "base or tiny.en")
    p = Path(model).expanduser() if model else None
    if p is None or not (p / "model.bin").is_file():
        raise ConfigError(
            f"Whisper model {model!r} is neither a packaged model (base, tiny.en) nor a local CTranslate2 "
            "directory with model.bin; egomem never downloads models"
        )
    return p


def _load(model_dir: Path, compute_type: str, cpu_threads: int) -> Any:
    key = (str(model_dir.resolve()), compute_type, cpu_threads)
    with _MODELS_LOCK:
        if key not in _MODELS:
            try:
                from faster_whisper import WhisperModel
            except ImportError as exc:
                raise ConfigError(
                    "the faster-whisper ASR needs the pip package faster-whisper: pip install 'egomem[models]'"
                ) from exc
            _MODELS[key] = WhisperModel(
                key[0], device="cpu", compute_type=compute_type, cpu_threads=cpu_threads, local_files_only=True
            )
        return _MODELS[key]


class FasterWhisperASR(ASRBackend):
    name = "faster-whisper"

    def __init__(
        self,
        model: str | Path = "base",
        *,
        data_dir: Path | None = None,
        beam_size: int = 5,
        compute_type: str = "int8",
        cpu_threads: int = 2,
        language: str = "en",
        hotwords_from_memory: bool = True,
        temperature_fallback: bool = False,
        loop_guard: bool = True,
        max_repeats: int = LOOP_REPEATS,
        retry_repetition_penalty: float = 1.1,
    ) -> None:
        self.model_name = str(model)
        self.model_dir = resolve_model_dir(self.model_name, data_dir)
        self._model = _load(self.model_dir, compute_type, cpu_threads)
        self.beam_size = beam_size
        self.language = language
        self.hotwords_from_memory = hotwords_from_memory
        # Only temperature 0 (no sampling) unless the fallback is wanted: see WhisperConfig.
        self._temperature: float | tuple[float, ...] = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0) if temperature_fallback else 0.0
        self.loop_guard = loop_guard
        self.max_repeats = max_repeats
        self.retry_repetition_penalty = retry_repetition_penalty
        self._hotwords: str | None = None
        # One decode at a time per instance; CTranslate2 would queue them anyway.
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, cfg: WhisperConfig, ctx: BuildContext) -> FasterWhisperASR:
        return cls(
            cfg.model,
            data_dir=ctx.data_dir,
            beam_size=cfg.beam_size,
            compute_type=cfg.compute_type,
            cpu_threads=cfg.cpu_threads,
            language=cfg.language,
            hotwords_from_memory=cfg.hotwords_from_memory,
            temperature_fallback=cfg.temperature_fallback,
            loop_guard=cfg.loop_guard,
            max_repeats=cfg.max_repeats,
            retry_repetition_penalty=cfg.retry_repetition_penalty,
        )

    def set_hotwords(self, names: list[str]) -> None:
        """Names already in memory, given to the decoder so it spells them as remembered.
        Ignored when `hotwords_from_memory` is off; an empty list clears them."""
        if not self.hotwords_from_memory:
            return
        unique = list(dict.fromkeys(n.strip() for n in names if n.strip()))
        self._hotwords = ", ".join(unique) if unique else None

    def _decode(self, audio: np.ndarray, *, words: bool, repetition_penalty: float = 1.0) -> list[Any]:
        with self._lock:
            segments, _info = self._model.transcribe(
                audio,
                language=self.language,
                beam_size=self.beam_size,
                word_timestamps=words,
                hotwords=self._hotwords,
                temperature=self._temperature,
                # Part of the guard: a loop in one 30 s window must not seed the next.
                condition_on_previous_text=not self.loop_guard,
                repetition_penalty=repetition_penalty,
            )
            return list(segments)  # the generator decodes lazily: finish it under the lock

    def _loop_score(self, segments: list[Any], words: bool) -> tuple[int, float]:
        """(longest back-to-back repeat of a phrase, highest window compression ratio) of a decode."""
        tokens = [w.word for s in segments for w in (s.words or [])] if words else _tokens(segments)
        ratio = max((float(s.compression_ratio) for s in segments), default=0.0)
        return longest_repeat(repeat_keys(tokens)), ratio

    def _loops(self, score: tuple[int, float]) -> bool:
        return score[0] > self.max_repeats or score[1] > COMPRESSION_RATIO_LOOP

    def _segments(self, audio: np.ndarray, *, words: bool) -> list[Any]:
        """The decode, guarded against loops (see the module docstring); deterministic."""
        first = self._decode(audio, words=words)
        if not self.loop_guard:
            return first
        first_score = self._loop_score(first, words)
        if not self._loops(first_score):
            return first
        retry = self._decode(audio, words=words, repetition_penalty=self.retry_repetition_penalty)
        retry_score = self._loop_score(retry, words)
        if not self._loops(retry_score):
            return retry
        return retry if retry_score < first_score else first

    def _transcribe16k(self, audio: np.ndarray) -> str:
        tokens = _tokens(self._segments(audio, words=False))
        if self.loop_guard:  # the last resort: a loop that survived the retry is cut to one copy
            tokens = [tokens[i] for i in collapsed_indices(repeat_keys(tokens), self.max_repeats)]
        return " ".join(tokens)

    def transcribe_cased(self, audio: np.ndarray, sample_rate: int = SAMPLE_RATE) -> str:
        """The text as Whisper wrote it: cased and punctuated ("" for silence or too-short audio)."""
        a = decodable16k(audio, sample_rate)
        return "" if a is None else self._transcribe16k(a)

    def transcribe_words(self, audio: np.ndarray, sample_rate: int = SAMPLE_RATE) -> list[Word]:
        """Every word with its start and end (seconds from the start of `audio`), cased and
        punctuated as Whisper wrote it; `" ".join(w.text for w in words)` is the cased text."""
        a = decodable16k(audio, sample_rate)
        if a is None:
            return []
        words = [
            Word(w.word.strip(), float(w.start), float(w.end), float(w.probability))
            for s in self._segments(a, words=True)
            for w in (s.words or [])
            if w.word.strip()
        ]
        if self.loop_guard:  # as in _transcribe16k: a surviving loop is cut to its first copy
            words = [words[i] for i in collapsed_indices(repeat_keys([w.text for w in words]), self.max_repeats)]
        return words


def _tokens(segments: list[Any]) -> list[str]:
    """The whitespace tokens of the segments' text, in order."""
    return [t for s in segments for t in s.text.split()]
