"""Short pieces of speech cut from an utterance as a live poll hears them (`bench speaker`'s
short-segment protocol, the fusion trials and their calibration)."""

from __future__ import annotations

import numpy as np

from egomem.media import SAMPLE_RATE
from egomem.perception.voice import VoiceEncoder

PIECE_MIN_S, PIECE_MAX_S = 0.3, 1.5
CONTEXT_S = 0.3  # background on each side of a piece


def speech_pieces(enc: VoiceEncoder, audio: np.ndarray, rng: np.random.Generator) -> list[tuple[float, np.ndarray]]:
    """(seconds of speech, query window) for consecutive 0.3-1.5 s pieces of the speech regions the
    product's VAD finds in `audio`. A live poll hears a short utterance inside its surroundings, so
    each window is the piece between CONTEXT_S of the recording's own non-speech on either side
    (its background, never other speech)."""
    segs = enc.vad.segments(audio, threshold=enc.config.vad_threshold, min_speech_s=0.1, min_silence_s=0.1, pad_s=0.0)
    mask = np.ones(audio.size, dtype=bool)
    for seg in segs:
        mask[int(seg.start * SAMPLE_RATE) : int(seg.end * SAMPLE_RATE)] = False
    background = audio[mask] if mask.sum() >= SAMPLE_RATE // 10 else np.zeros(SAMPLE_RATE // 10, np.float32)
    n_ctx = int(CONTEXT_S * SAMPLE_RATE)
    context = np.tile(background, int(np.ceil(2 * n_ctx / background.size)))
    out = []
    for seg in segs:
        start, end = seg.start, seg.end
        while end - start >= PIECE_MIN_S:
            length = float(rng.uniform(PIECE_MIN_S, PIECE_MAX_S))
            if end - start < length:
                length = end - start  # the region's tail: shorter than drawn, still >= 0.3 s
            piece = audio[int(start * SAMPLE_RATE) : int((start + length) * SAMPLE_RATE)]
            out.append((length, np.concatenate([context[:n_ctx], piece, context[n_ctx : 2 * n_ctx]])))
            start += length
    return out
