"""Speech of a stream: users' voices from the offline pool, the assistant's fixed voice,
the two channels mixed from a plan, and the paper's augmentation of the listening channel.

Users speak with `egomem_eval.voices` (Festival and espeak-ng variants, plus more
espeak-ng accents and variants here so a stream of many users still has a voice each);
the assistant speaks with the product's own TTS (`egomem.dialog.speech`: Piper "joe", or
espeak-ng's default voice, which is not in the users' pool). Augmentation (Appendix D):
microphone echo (the speaking channel, delayed 0.1-0.5 s at gain 0-0.2, p=0.3),
background speech (another pool voice saying other lines of the script, 10-20 dB under
the users, p=0.5) and white noise (10-30 dB SNR, p=0.8), all on the listening channel.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from egomem.dialog.speech import EspeakSynthesizer, PiperSynthesizer, Synthesizer
from egomem.errors import InputError
from egomem.media import SAMPLE_RATE
from egomem.perception.audio import add_noise
from egomem.stream.clock import SAMPLES_PER_STEP
from egomem_eval.voices import VOICES, Voice, installed_voices, synthesize
from egomem_training.data.plan import SessionPlan

# More espeak-ng accents and variants for users (the bench keeps its own eight in VOICES).
EXTRA_VOICES = tuple(
    Voice("espeak-ng", f"{accent}+{variant}", variant[0])
    for accent in ("en-gb-scotland", "en-029", "en-us-nyc", "en-gb-x-gbclan")
    for variant in ("m2", "f1", "m4", "f5")
)


class AugmentConfig(BaseModel):
    echo_p: float = Field(default=0.3, ge=0.0, le=1.0)
    echo_gain: tuple[float, float] = (0.0, 0.2)
    echo_delay_s: tuple[float, float] = (0.1, 0.5)
    interrupt_p: float = Field(default=0.3, ge=0.0, le=1.0)
    background_p: float = Field(default=0.5, ge=0.0, le=1.0)
    background_db_below: tuple[float, float] = (10.0, 20.0)
    noise_p: float = Field(default=0.8, ge=0.0, le=1.0)
    snr_db: tuple[float, float] = (10.0, 30.0)


@dataclass
class AugmentChoice:
    """Every random choice of one stream's augmentation (stored in the sample metadata)."""

    echo: bool
    echo_gain: float
    echo_delay_s: float
    background: bool
    background_db_below: float
    noise: bool
    snr_db: float

    def record(self) -> dict[str, Any]:
        return asdict(self)


def draw_augmentation(rng: np.random.Generator, cfg: AugmentConfig) -> AugmentChoice:
    """All values are drawn whether used or not, so one choice never shifts the others."""
    return AugmentChoice(
        echo=bool(rng.random() < cfg.echo_p),
        echo_gain=float(rng.uniform(*cfg.echo_gain)),
        echo_delay_s=float(rng.uniform(*cfg.echo_delay_s)),
        background=bool(rng.random() < cfg.background_p),
        background_db_below=float(rng.uniform(*cfg.background_db_below)),
        noise=bool(rng.random() < cfg.noise_p),
        snr_db=float(rng.uniform(*cfg.snr_db)),
    )


def user_voice_pool(engines: tuple[str, ...] = ("festival", "espeak-ng")) -> list[Voice]:
    pool = [v for v in installed_voices((*VOICES, *EXTRA_VOICES)) if v.engine in engines]
    if not pool:
        raise InputError(f"no user voices installed for engines {', '.join(engines)} (apt-get install espeak-ng)")
    return pool


def assign_voices(rng: np.random.Generator, users: list[str], pool: list[Voice]) -> dict[str, Voice]:
    """A different voice for every user of a stream (drawn without replacement)."""
    if len(users) > len(pool):
        raise InputError(
            f"{len(users)} users in one stream but only {len(pool)} voices installed: lower --sessions-per-stream"
        )
    picks = rng.choice(len(pool), size=len(users), replace=False)
    return {u: pool[int(i)] for u, i in zip(users, picks, strict=True)}


def assistant_synthesizer(kind: str) -> Synthesizer:
    """The assistant's one voice: `piper` (joe) or `espeak-ng` (its default en-us voice)."""
    if kind == "piper":
        return PiperSynthesizer()
    if kind == "espeak-ng":
        return EspeakSynthesizer()
    raise InputError(f"assistant voice {kind!r}: expected piper or espeak-ng")


def trim_silence(audio: np.ndarray, floor_db: float = -50.0) -> np.ndarray:
    """Cut leading and trailing 10 ms frames quieter than `floor_db`, so a turn's onset is speech."""
    frame = SAMPLE_RATE // 100
    n = audio.size // frame
    if n == 0:
        return audio
    power = np.mean(np.square(audio[: n * frame].reshape(n, frame), dtype=np.float64), axis=1)
    loud = np.flatnonzero(power > 10 ** (floor_db / 10))
    if loud.size == 0:
        return audio[:0]
    return audio[loud[0] * frame : (loud[-1] + 1) * frame]


def at_level(x: np.ndarray, db: float) -> np.ndarray:
    rms = float(np.sqrt(np.mean(np.square(x, dtype=np.float64)))) if x.size else 0.0
    return (x * (10 ** (db / 20) / (rms or 1e-6))).astype(np.float32)


class LineCache:
    """Each (voice, text) is synthesized once per build (a line recurs across streams)."""

    def __init__(self, tmp: Path, assistant: Synthesizer) -> None:
        self.tmp, self.assistant = tmp, assistant
        self._user: dict[tuple[str, str], np.ndarray] = {}

    def user(self, text: str, voice: Voice) -> np.ndarray:
        key = (voice.id, text)
        if key not in self._user:
            self._user[key] = trim_silence(synthesize(text, voice, self.tmp))
        return self._user[key]

    def reply(self, text: str) -> np.ndarray:
        return trim_silence(np.asarray(self.assistant.synthesize(text), dtype=np.float32))


def mix(
    sessions: list[SessionPlan],
    user_audio: dict[tuple[int, int], np.ndarray],
    reply_audio: dict[tuple[int, int], np.ndarray],
    steps: int,
) -> tuple[np.ndarray, np.ndarray]:
    """(listening, speaking) channels of `steps` steps; audio past the end is cut off."""
    n = steps * SAMPLES_PER_STEP
    listen = np.zeros(n, dtype=np.float32)
    speak = np.zeros(n, dtype=np.float32)
    fade = SAMPLE_RATE // 25  # 40 ms: an interrupted reply stops without a click
    for s in sessions:
        for t in s.turns:
            u = user_audio[(s.index, t.turn)]
            _add(listen, t.user_start * SAMPLES_PER_STEP, u)
            r = reply_audio[(s.index, t.turn)][: t.reply_samples].copy()
            if t.interrupted and r.size > fade:
                r[-fade:] *= np.linspace(1.0, 0.0, fade, dtype=np.float32)
            _add(speak, t.reply_start * SAMPLES_PER_STEP, r)
    return listen, speak


def _add(buf: np.ndarray, at: int, x: np.ndarray) -> None:
    if at >= buf.size:
        return
    x = x[: buf.size - at]
    buf[at : at + x.size] += x


def augment(
    rng: np.random.Generator, choice: AugmentChoice, listen: np.ndarray, speak: np.ndarray, background: np.ndarray
) -> np.ndarray:
    """The listening channel with the chosen echo, background speech and noise."""
    out = listen.copy()
    if choice.echo:
        d = int(choice.echo_delay_s * SAMPLE_RATE)
        out[d:] += choice.echo_gain * speak[: out.size - d]
    speech_db = _speech_db(listen)
    if choice.background and background.size:
        reps = math.ceil(out.size / background.size) + 1
        off = int(rng.integers(background.size))
        out += at_level(np.tile(background, reps)[off : off + out.size], speech_db - choice.background_db_below)
    if choice.noise:
        out = add_noise(out, choice.snr_db, rng).astype(np.float32)
    return out


def _speech_db(x: np.ndarray) -> float:
    frames = x[: x.size // SAMPLES_PER_STEP * SAMPLES_PER_STEP].reshape(-1, SAMPLES_PER_STEP).astype(np.float64)
    p = np.mean(np.square(frames), axis=1)
    loud = p[p > 1e-7]
    return float(10 * np.log10(np.mean(loud))) if loud.size else -30.0
