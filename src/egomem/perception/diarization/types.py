"""Diarization settings and results."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from egomem.perception.vad import Segment

FRAME_S = 0.05  # resolution of the re-segmentation grid and of the output turns


@dataclass(frozen=True)
class DiarizationConfig:
    """Defaults chosen on the 10 `trn` debug meetings only (docs/benchmarks/diarization.md): the
    lowest DER (no collar + ±0.25 s) among the settings that get the exact speaker count on at
    least half of those files."""

    # Speech regions (Silero, on at vad_threshold, off 0.15 below). A low threshold and wide
    # padding: far-field meeting speech rarely reaches Silero's usual 0.5.
    vad_threshold: float = 0.25
    min_speech_s: float = 0.25
    min_silence_s: float = 0.5
    pad_s: float = 0.25
    # Embedding windows sliding inside each speech region; a shorter region is one window.
    window_s: float = 2.0
    hop_s: float = 0.25
    min_window_s: float = 0.3  # regions shorter than this are labelled from the nearest window
    # Clustering: "ahc" (average linkage, cosine distance threshold), "spectral" (eigengap; the
    # threshold is the fraction of each affinity row kept), or "single" (one speaker).
    method: str = "ahc"
    threshold: float = 0.35
    max_speakers: int = 8
    min_cluster_s: float = 0.0  # clusters covering less speech than this join the nearest other
    # Re-segmentation: each speech frame takes the cluster with the best mean cosine over the
    # windows covering it (resegment=False: the label of the nearest window, as the baseline
    # does); change_penalty > 0 adds a Viterbi pass with that cost per change (on trn it lowers
    # DER a little only at penalties that also delete short speakers, so it is off).
    resegment: bool = True
    change_penalty: float = 0.0
    min_turn_s: float = 0.0
    # Overlap heuristic: where two speakers' turns touch, each is also output for up to
    # overlap_s into the other's turn (people talk over each other at turn changes).
    overlap_s: float = 0.75
    # Online mode: a window joins the nearest centroid within this cosine distance, else it
    # opens a new cluster.
    online_threshold: float = 0.35


# Silero at its usual settings (0.5, 0.25 s speech, 0.3 s silence, 0.05 s padding), no overlap output.
_SILERO_DEFAULTS = replace(
    DiarizationConfig(), vad_threshold=0.5, min_speech_s=0.25, min_silence_s=0.3, pad_s=0.05, overlap_s=0.0
)
# The baseline: silero + resemblyzer 2 s windows hop 0.5 s + average linkage at 0.40, window labels.
THRESHOLD_CLUSTERING = replace(_SILERO_DEFAULTS, window_s=2.0, hop_s=0.5, method="ahc", threshold=0.40, resegment=False)
# One speaker over the speech Silero finds at its usual settings.
SINGLE_SPEAKER = replace(_SILERO_DEFAULTS, method="single", resegment=False)


@dataclass(frozen=True)
class Turn:
    start: float  # seconds
    end: float
    speaker: int  # cluster index into Diarization.centroids

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass
class Diarization:
    turns: list[Turn]  # in time order; two speakers' turns overlap where the heuristic says so
    centroids: np.ndarray  # (clusters, 256), L2-normalised ((1, 0) for the single-speaker config)
    speech: list[Segment] = field(default_factory=list)

    @property
    def speakers(self) -> int:
        return len({t.speaker for t in self.turns})

    def speaking_time(self) -> dict[int, float]:
        out: dict[int, float] = {}
        for t in self.turns:
            out[t.speaker] = out.get(t.speaker, 0.0) + t.duration
        return out


@dataclass
class Windows:
    spans: list[tuple[float, float]]  # seconds
    vectors: np.ndarray  # (windows, 256), L2-normalised


def empty_result(speech: list[Segment] | None = None) -> Diarization:
    return Diarization([], np.zeros((0, 0), np.float32), list(speech or []))
