"""Speaker embedding (256-d resemblyzer) of the speech in an audio window, robust to noise.

Pipeline for one window: any rate/channels -> 16 kHz mono (`to_mono16k`) -> Silero VAD
speech segments -> spectral gating (`noisereduce`, stationary, noise profile taken
from the window's own non-speech part when there is enough, else from the whole
window) -> level normalisation -> resemblyzer's partial-window average.

Why this order: Silero stays reliable down to ~5 dB SNR white noise, while webrtcvad
(resemblyzer's own trimming) marks almost everything as speech in noise; gating
before embedding removes the stationary noise floor that otherwise pulls every noisy
embedding towards one "noise" direction (which is what makes impostors score high).

Returns None ("no speech") for silence, noise only, or less speech than
`config.min_speech_s`; raises InputError for unusable input (NaN, bad shape).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from egomem.config import VoiceConfig
from egomem.encoders import RESEMBLYZER_VOICE
from egomem.media import SAMPLE_RATE, to_mono16k
from egomem.perception.types import VoiceObservation
from egomem.perception.vad import SileroVAD, speech_only

VOICE_MODEL = RESEMBLYZER_VOICE.name
VOICE_DIM = RESEMBLYZER_VOICE.dim
TARGET_DBFS = -30.0  # resemblyzer's training normalisation
MIN_NOISE_S = 0.3  # non-speech needed to estimate the noise profile from the window itself
PARTIAL_SAMPLES = 25_600  # resemblyzer's partial window: 160 mel frames of 10 ms = 1.6 s at 16 kHz


class VoiceEncoder:
    """Lazily loads Silero VAD and resemblyzer; one lock per model (torch module, ONNX session)."""

    def __init__(self, config: VoiceConfig | None = None, vad: SileroVAD | None = None) -> None:
        self.config = config or VoiceConfig()
        self._vad = vad
        self._model: Any = None
        self._load_lock = threading.Lock()
        self._embed_lock = threading.Lock()

    @property
    def vad(self) -> SileroVAD:
        if self._vad is None:
            with self._load_lock:
                if self._vad is None:
                    self._vad = SileroVAD()
        return self._vad

    def load(self) -> None:
        """Load both models now instead of on first use."""
        _ = self.vad
        self._encoder()

    def _encoder(self) -> Any:
        if self._model is None:
            with self._load_lock:
                if self._model is None:
                    from resemblyzer import VoiceEncoder as _Resemblyzer

                    self._model = _Resemblyzer(device="cpu", verbose=False)
        return self._model

    def speech(self, audio: np.ndarray, sample_rate: int = SAMPLE_RATE) -> tuple[np.ndarray, np.ndarray]:
        """(speech samples, non-speech samples) of a window, at 16 kHz."""
        a = to_mono16k(audio, sample_rate)
        if a.size < SAMPLE_RATE // 10 or float(np.max(np.abs(a), initial=0.0)) < 1e-4:
            return np.zeros(0, np.float32), a
        segs = self.vad.segments(a, threshold=self.config.vad_threshold, min_speech_s=0.1, min_silence_s=0.2)
        voiced = speech_only(a, segs)
        mask = np.ones(a.size, dtype=bool)
        for s in segs:
            mask[int(s.start * SAMPLE_RATE) : int(s.end * SAMPLE_RATE)] = False
        return voiced, a[mask]

    def clean(self, speech: np.ndarray, noise: np.ndarray | None = None, snr_db: float = 0.0) -> np.ndarray:
        """Spectral gating (when `snr_db` is below config.denoise_below_snr_db), then level normalisation."""
        x = speech.astype(np.float32)
        # Gate only audibly noisy windows: gating clean speech changes its timbre for nothing.
        if self.config.denoise and x.size >= SAMPLE_RATE // 4 and snr_db < self.config.denoise_below_snr_db:
            import noisereduce as nr

            use_noise = noise is not None and noise.size >= MIN_NOISE_S * SAMPLE_RATE
            x = nr.reduce_noise(
                y=x,
                sr=SAMPLE_RATE,
                stationary=True,
                y_noise=noise if use_noise else None,
                prop_decrease=0.9,  # keep a little floor: full removal leaves musical noise the encoder dislikes
                n_jobs=1,
            ).astype(np.float32)
        return normalise_level(x)

    def embed_speech(self, speech: np.ndarray) -> np.ndarray:
        """L2-normalised 256-d embedding of speech that is already cleaned (16 kHz).

        Speech of at least one resemblyzer window (1.6 s) is the average of its partial windows.
        Shorter speech would be zero-padded to one window by resemblyzer, and the LSTM's last state
        then summarises mostly silence; `config.short_embedding` says what to do instead:
        "repeat" tiles the speech to fill the window, "window" runs the LSTM on the speech's own
        frames only, "pad" keeps resemblyzer's zero padding."""
        x = speech.astype(np.float32)
        enc = self._encoder()
        method = self.config.short_embedding
        with self._embed_lock:
            if x.size >= PARTIAL_SAMPLES or method == "pad":
                vec = enc.embed_utterance(x)
            elif method == "repeat":
                vec = enc.embed_utterance(np.tile(x, int(np.ceil(PARTIAL_SAMPLES / max(x.size, 1)))))
            else:
                vec = _own_window(enc, x)
        v = np.asarray(vec, dtype=np.float32)
        return v / (float(np.linalg.norm(v)) or 1.0)

    def observe(self, audio: np.ndarray | None, sample_rate: int = SAMPLE_RATE) -> VoiceObservation | None:
        """Embedding of the speech in a window; None when there is not enough speech."""
        if audio is None:
            return None
        voiced, rest = self.speech(audio, sample_rate)
        speech_s = voiced.size / SAMPLE_RATE
        if speech_s < max(self.config.min_speech_s, 0.1):
            return None
        # Without a speech-free stretch, estimate the noise from the whole window (stationary gating
        # takes a per-frequency percentile-like statistic, so speech bursts bias it only a little).
        window = to_mono16k(audio, sample_rate)
        noise = rest if rest.size >= MIN_NOISE_S * SAMPLE_RATE else window
        cleaned = self.clean(voiced, noise, estimate_snr_db(window))
        return VoiceObservation(vector=self.embed_speech(cleaned), speech_s=speech_s)


def estimate_snr_db(window: np.ndarray) -> float:
    """Rough SNR of a window: mean power over the noise floor, taken as the mean power of the
    quietest 10 % of 32 ms frames (true pauses in clean speech are 40+ dB down; stationary
    noise fills them)."""
    n = window.size // 512
    if n < 10:
        return float("inf")
    frames = np.mean(np.square(window[: n * 512].reshape(n, 512), dtype=np.float64), axis=1)
    p_noise = float(np.mean(np.sort(frames)[: max(1, n // 10)]))
    p_all = float(frames.mean())
    if p_noise <= 1e-12:
        return float("inf")
    return 10 * float(np.log10(max(p_all - p_noise, 1e-12) / p_noise))


def normalise_level(x: np.ndarray, target_dbfs: float = TARGET_DBFS) -> np.ndarray:
    rms = float(np.sqrt(np.mean(np.square(x, dtype=np.float64)))) if x.size else 0.0
    if rms <= 1e-8:
        return x
    gain = 10 ** (target_dbfs / 20) / rms
    return np.clip(x * gain, -1.0, 1.0).astype(np.float32)


def band_limit(x: np.ndarray, low_hz: float = 300.0, high_hz: float = 3400.0) -> np.ndarray:
    """Telephone-band copy of 16 kHz audio (cohort chunks are made in several conditions)."""
    from scipy.signal import butter, sosfiltfilt

    if x.size < 64:
        return x
    sos = butter(4, [low_hz, high_hz], btype="band", fs=SAMPLE_RATE, output="sos")
    return sosfiltfilt(sos, x).astype(np.float32)


def _own_window(model: Any, speech: np.ndarray) -> np.ndarray:
    """resemblyzer's embedding of one window as long as the speech itself (no padding)."""
    import torch
    from resemblyzer import audio as rz_audio

    mel = rz_audio.wav_to_mel_spectrogram(speech)
    with torch.no_grad():
        out = model(torch.from_numpy(mel[None].astype(np.float32))).cpu().numpy()[0]
    return np.asarray(out, dtype=np.float32)
