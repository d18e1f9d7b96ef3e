"""Offline diarization over a finished window or file."""

from __future__ import annotations

from typing import Any

import numpy as np

from egomem.media import SAMPLE_RATE, to_mono16k
from egomem.perception.diarization.cluster import centroids as cluster_centroids
from egomem.perception.diarization.cluster import cluster, fold_small_clusters
from egomem.perception.diarization.segment import frame_scores, overlap_at_changes, turns_from_scores, window_spans
from egomem.perception.diarization.types import Diarization, DiarizationConfig, Turn, Windows, empty_result
from egomem.perception.threads import torch_single_thread
from egomem.perception.vad import Segment, segments_from_probs
from egomem.perception.voice import VoiceEncoder, normalise_level

MEL_RATE = 100  # resemblyzer's mel frames per second (10 ms step)
BATCH = 64


def _resemblyzer(encoder: VoiceEncoder) -> Any:
    """The resemblyzer model the product's voice encoder holds (loaded once, shared)."""
    return encoder._encoder()


class Diarizer:
    """Who spoke when, with the product's voice encoder and its Silero VAD (no second copy)."""

    def __init__(self, encoder: VoiceEncoder | None = None, config: DiarizationConfig | None = None) -> None:
        self.encoder = encoder or VoiceEncoder()
        self.config = config or DiarizationConfig()

    def with_config(self, config: DiarizationConfig) -> Diarizer:
        """Another configuration sharing the same loaded models."""
        return Diarizer(self.encoder, config)

    def speech_regions(self, audio: np.ndarray) -> list[Segment]:
        c = self.config
        probs = self.encoder.vad.probabilities(audio)
        return segments_from_probs(
            probs, self.encoder.vad.frame_s, c.vad_threshold, c.min_speech_s, c.min_silence_s, c.pad_s,
            audio.size / SAMPLE_RATE,
        )  # fmt: skip

    def diarize(self, audio: np.ndarray | None, sample_rate: int = SAMPLE_RATE) -> Diarization:
        """Turns of each speaker; an empty result for no audio, silence or no speech."""
        if audio is None:
            return empty_result()
        a = to_mono16k(audio, sample_rate)
        if a.size < SAMPLE_RATE // 10 or float(np.max(np.abs(a), initial=0.0)) < 1e-4:
            return empty_result()
        speech = self.speech_regions(a)
        return self.diarize_regions(a, speech) if speech else empty_result()

    def diarize_regions(self, audio: np.ndarray, speech: list[Segment]) -> Diarization:
        """Diarization of 16 kHz audio whose speech regions are given (the VAD's, or a reference's)."""
        c = self.config
        if c.method == "single":
            return Diarization([Turn(s.start, s.end, 0) for s in speech], np.zeros((1, 0), np.float32), speech)
        win = self.embed_windows(audio, speech)
        if not win.spans:
            return empty_result(speech)
        labels = cluster(win.vectors, c.method, c.threshold, c.max_speakers)
        labels = fold_small_clusters(labels, win.vectors, win.spans, c.min_cluster_s)
        cents = cluster_centroids(win.vectors, labels)
        scores = frame_scores(speech, win, cents, c.resegment)
        turns = turns_from_scores(speech, scores, c.change_penalty if c.resegment else 0.0, c.min_turn_s)
        return Diarization(overlap_at_changes(turns, c.overlap_s), cents, speech)

    def embed_windows(self, audio: np.ndarray, speech: list[Segment]) -> Windows:
        """Embeddings of the windows of every speech region: one mel spectrogram per region (level-
        normalised as resemblyzer expects), its windows through resemblyzer's LSTM in batches."""
        import torch
        from resemblyzer.audio import wav_to_mel_spectrogram

        c = self.config
        spans: list[tuple[float, float]] = []
        buckets: dict[int, list[np.ndarray]] = {}  # window length in frames -> mel windows
        where: list[tuple[int, int]] = []  # (length, index in its bucket) of each span
        for seg in speech:
            region = window_spans([seg], c.window_s, c.hop_s, c.min_window_s)
            if not region:
                continue
            x = normalise_level(audio[int(seg.start * SAMPLE_RATE) : int(seg.end * SAMPLE_RATE)])
            mel = wav_to_mel_spectrogram(x)
            for s, e in region:
                a = round((s - seg.start) * MEL_RATE)
                w = mel[a : a + max(1, round((e - s) * MEL_RATE))]
                if w.shape[0] == 0:
                    continue
                bucket = buckets.setdefault(w.shape[0], [])
                where.append((w.shape[0], len(bucket)))
                bucket.append(w)
                spans.append((s, e))
        if not spans:
            return Windows([], np.zeros((0, 256), np.float32))
        model = _resemblyzer(self.encoder)
        out: dict[int, np.ndarray] = {}
        with torch.no_grad(), torch_single_thread():
            for length, ws in buckets.items():
                batch = np.stack(ws).astype(np.float32)
                parts = [model(torch.from_numpy(batch[i : i + BATCH])).cpu().numpy() for i in range(0, len(ws), BATCH)]
                out[length] = np.concatenate(parts)
        vecs = np.stack([out[n][i] for n, i in where])
        vecs = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-10)
        return Windows(spans, vecs.astype(np.float32))
