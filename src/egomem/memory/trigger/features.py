"""Per-step features of the two audio channels for the episodic trigger.

One row per 80 ms step. The features are speaker-agnostic on purpose (VAD, levels,
and *changes* of the speaker embedding, never the embedding itself), so a tagger
trained on a few dozen speakers transfers to voices it never heard.

Cost control: Silero VAD runs on the listening channel only; the speaking channel is
the assistant's own digital output, so its level is a reliable activity signal. The
speaker embedding (resemblyzer, 1.6 s windows every 0.8 s) is computed only for
windows with user speech, in one batch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from egomem.errors import InputError
from egomem.perception.threads import torch_single_thread
from egomem.perception.vad import WINDOW as VAD_WINDOW
from egomem.stream.clock import SAMPLES_PER_STEP, STEP_S  # the full-duplex step (12.5 steps/s)

EMB_WIN_STEPS = 20  # 1.6 s speaker-embedding window
EMB_HOP_STEPS = 10  # 0.8 s hop
SPEAK_ACTIVE_DB = -50.0  # speaking-channel level above which the assistant is talking

FEATURE_NAMES = (
    "listen_vad_max",
    "listen_vad_mean",
    "listen_db",
    "speak_db",
    "speak_active",
    "spk_change_1",
    "spk_change_3",
    "secs_to_left_voice",
    "secs_to_right_voice",
    "voice_window_here",
)
N_FEATURES = len(FEATURE_NAMES)

Embedder = Callable[[np.ndarray, list[tuple[int, int]]], np.ndarray]


def n_steps(n_samples: int) -> int:
    """Steps covering `n_samples` (a trailing partial step counts as a step)."""
    return -(-n_samples // SAMPLES_PER_STEP)


def check_channels(listen: np.ndarray, speak: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Validate the two 16 kHz mono channels and pad them to the same whole number of steps."""
    chans = []
    for name, a in (("listening", listen), ("speaking", speak)):
        arr = np.asarray(a)
        if arr.ndim != 1:
            raise InputError(f"{name} channel must be 1-d 16 kHz mono (use to_mono16k), got shape {arr.shape}")
        if not np.issubdtype(arr.dtype, np.floating):
            raise InputError(f"{name} channel must be float audio in [-1, 1] (use to_mono16k), got {arr.dtype}")
        if arr.size and not np.all(np.isfinite(arr)):
            raise InputError(f"{name} channel contains NaN or infinite samples")
        chans.append(arr.astype(np.float32, copy=False))
    la, sa = chans
    if abs(la.size - sa.size) > SAMPLES_PER_STEP:
        raise InputError(
            f"listening and speaking channels differ in length ({la.size} vs {sa.size} samples); "
            "they must cover the same time span"
        )
    total = n_steps(max(la.size, sa.size)) * SAMPLES_PER_STEP
    return np.pad(la, (0, total - la.size)), np.pad(sa, (0, total - sa.size))


def step_db(audio: np.ndarray) -> np.ndarray:
    """RMS level of each step in dBFS, floored at -100."""
    frames = audio.reshape(-1, SAMPLES_PER_STEP).astype(np.float64)
    power = np.mean(np.square(frames), axis=1)
    return (10 * np.log10(np.maximum(power, 1e-10))).astype(np.float32)


@dataclass(frozen=True)
class KnownVAD:
    """Silero probabilities of the listening channel computed elsewhere (the dialog's turn
    detector runs the same model over the same audio, its state carried from the stream's
    start): window i starts at sample `start + i * 512`, counted from the start of the audio
    they come with (negative: before it)."""

    probs: np.ndarray
    start: int


def vad_per_step(probs: np.ndarray, steps: int, start: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Max and mean Silero probability of the 32 ms windows whose centre falls in each step
    (window i starts at sample `start + i * 512`; windows centred outside the steps are left
    out). Whole samples, so a centre on a step edge goes to the same step wherever the audio
    was cut."""
    vmax = np.zeros(steps, dtype=np.float32)
    vsum = np.zeros(steps, dtype=np.float32)
    count = np.zeros(steps, dtype=np.float32)
    if probs.size:
        centres = start + np.arange(probs.size, dtype=np.int64) * VAD_WINDOW + VAD_WINDOW // 2
        inside = (centres >= 0) & (centres < steps * SAMPLES_PER_STEP)
        probs, idx = probs[inside], centres[inside] // SAMPLES_PER_STEP
        np.maximum.at(vmax, idx, probs)
        np.add.at(vsum, idx, probs)
        np.add.at(count, idx, 1.0)
    return vmax, np.divide(vsum, count, out=np.zeros_like(vsum), where=count > 0)


class ResemblyzerEmbedder:
    """Speaker embeddings of step ranges of one signal, batched through resemblyzer's LSTM."""

    def __init__(self) -> None:
        from resemblyzer import VoiceEncoder

        self._encoder = VoiceEncoder("cpu", verbose=False)

    def __call__(self, audio: np.ndarray, windows: list[tuple[int, int]]) -> np.ndarray:
        import torch
        from resemblyzer.audio import wav_to_mel_spectrogram

        if not windows:
            return np.zeros((0, 256), dtype=np.float32)
        mel = wav_to_mel_spectrogram(audio)  # 10 ms frames, linear power
        frames_per_step = round(STEP_S * 100)
        n = EMB_WIN_STEPS * frames_per_step
        batch = np.zeros((len(windows), n, mel.shape[1]), dtype=np.float32)
        for i, (a, b) in enumerate(windows):
            seg = mel[a * frames_per_step : b * frames_per_step][:n]
            # Level-normalise like resemblyzer's preprocess (-30 dBFS), on the power spectrum.
            wav = audio[a * SAMPLES_PER_STEP : b * SAMPLES_PER_STEP]
            level = 10 * np.log10(max(float(np.mean(np.square(wav, dtype=np.float64))), 1e-10))
            batch[i, : seg.shape[0]] = seg * 10 ** ((-30.0 - level) / 10)
        with torch.no_grad(), torch_single_thread():
            out = self._encoder(torch.from_numpy(batch)).numpy()
        return out.astype(np.float32)


@dataclass
class FeatureExtractor:
    """Turns (listening, speaking) 16 kHz audio into a (steps, N_FEATURES) float32 matrix."""

    vad_probs: Callable[[np.ndarray], np.ndarray]
    embed: Embedder

    @classmethod
    def default(cls) -> FeatureExtractor:
        from egomem.perception.vad import SileroVAD

        return cls(SileroVAD().probabilities, ResemblyzerEmbedder())

    def __call__(self, listen: np.ndarray, speak: np.ndarray, vad: KnownVAD | None = None) -> np.ndarray:
        """`vad`: the listening channel's VAD when already computed; used when it covers the
        audio from its start (else Silero runs here)."""
        la, sa = check_channels(listen, speak)
        steps = la.size // SAMPLES_PER_STEP
        if steps == 0:
            return np.zeros((0, N_FEATURES), dtype=np.float32)
        if vad is not None and vad.start <= VAD_WINDOW // 2:
            vmax, vmean = vad_per_step(np.asarray(vad.probs, np.float32), steps, vad.start)
        else:
            vmax, vmean = vad_per_step(self.vad_probs(la), steps)
        ldb, sdb = step_db(la), step_db(sa)
        speak_active = (sdb > SPEAK_ACTIVE_DB).astype(np.float32)
        change = self._speaker_change(la, vmean, speak_active)
        feats = np.column_stack(
            [
                vmax,
                vmean,
                np.clip((ldb + 60.0) / 40.0, -0.5, 1.5),
                np.clip((sdb + 60.0) / 40.0, -0.5, 1.5),
                speak_active,
                change,
            ]
        )
        return feats.astype(np.float32)

    def _speaker_change(self, listen: np.ndarray, vad: np.ndarray, speak_active: np.ndarray) -> np.ndarray:
        """Cosine distance between the nearest user-voice embeddings left and right of each step."""
        steps = vad.size
        out = np.zeros((steps, 5), dtype=np.float32)
        out[:, 0:2] = 1.0  # "unknown" change when there is no voice on one side
        out[:, 2:4] = np.log1p(60.0)
        starts = range(0, max(steps - EMB_WIN_STEPS, 0) + 1, EMB_HOP_STEPS)
        windows = [
            (a, a + EMB_WIN_STEPS)
            for a in starts
            # A window is a user-voice sample when it is mostly speech and not the assistant's echo.
            if vad[a : a + EMB_WIN_STEPS].mean() >= 0.5 and speak_active[a : a + EMB_WIN_STEPS].mean() < 0.3
        ]
        if not windows:
            return out
        emb = self.embed(listen, windows)
        emb /= np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-8)
        centres = np.array([(a + b) / 2 for a, b in windows])
        t = np.arange(steps) + 0.5
        right = np.searchsorted(centres, t, side="right")  # first window centred after t
        left = right - 1
        has_both = (left >= 0) & (right < len(windows))
        for col, k in ((0, 1), (1, 3)):
            csum = np.vstack([np.zeros((1, emb.shape[1]), dtype=np.float32), np.cumsum(emb, axis=0)])
            lo = np.clip(left + 1 - k, 0, None)
            lmean = csum[np.clip(left + 1, 0, None)] - csum[lo]
            hi = np.clip(right + k, None, len(windows))
            rmean = csum[hi] - csum[np.clip(right, None, len(windows))]
            num = np.sum(lmean * rmean, axis=1)
            den = np.linalg.norm(lmean, axis=1) * np.linalg.norm(rmean, axis=1)
            dist = 1.0 - np.divide(num, den, out=np.zeros_like(num), where=den > 0)
            out[:, col] = np.where(has_both, dist, 1.0)
        left_t = np.where(left >= 0, t - centres[np.clip(left, 0, None)], 60 / STEP_S)
        right_t = np.where(right < len(windows), centres[np.clip(right, None, len(windows) - 1)] - t, 60 / STEP_S)
        out[:, 2] = np.log1p(np.clip(left_t * STEP_S, 0, 60))
        out[:, 3] = np.log1p(np.clip(right_t * STEP_S, 0, 60))
        for a, b in windows:
            out[a:b, 4] = 1.0
        return out
