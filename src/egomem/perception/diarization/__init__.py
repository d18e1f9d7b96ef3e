"""Speaker diarization: who spoke when, offline over a finished window or file, and online.

Offline (`Diarizer.diarize`):
1. Silero VAD (the voice encoder's own) -> speech regions.
2. Resemblyzer embeddings (the product's `VoiceEncoder`, never a second copy) of 2 s windows
   every 0.25 s inside each region (`offline.py`).
3. Average-linkage clustering on cosine distance at a threshold, or spectral clustering with
   an eigengap speaker count (`cluster.py`). Every default was chosen on the 10 `trn` files of
   the pyannote debug meetings only; `egomem bench diarization` reports dev/tst apart.
4. Re-segmentation: each 50 ms speech frame takes the cluster with the best mean score over the
   windows covering it, so turns change where the voice changes, not on the window grid; an
   optional Viterbi pass; the overlap heuristic outputs both speakers around each change
   (`segment.py`).

Online (`OnlineDiarizer`, `online.py`): each new window joins the nearest centroid or opens a
cluster; labels are final after `delay_s` (window_s / 2 + hop_s).

`TurnSplitter` (`split.py`) cuts one finished user turn where its voice changes, before ASR.

`map_to_users` (`users.py`) maps cluster centroids to enrolled users through a lookup the
caller supplies (perception does not import identity).
"""

from egomem.perception.diarization.cluster import ahc, cluster, spectral
from egomem.perception.diarization.offline import Diarizer
from egomem.perception.diarization.online import OnlineDiarizer
from egomem.perception.diarization.segment import merge_short_turns, overlap_at_changes, viterbi, window_spans
from egomem.perception.diarization.split import TurnSplitter, pieces_from_turns
from egomem.perception.diarization.types import (
    FRAME_S,
    SINGLE_SPEAKER,
    THRESHOLD_CLUSTERING,
    Diarization,
    DiarizationConfig,
    Turn,
    Windows,
)
from egomem.perception.diarization.users import map_to_users

__all__ = [
    "FRAME_S",
    "SINGLE_SPEAKER",
    "THRESHOLD_CLUSTERING",
    "Diarization",
    "DiarizationConfig",
    "Diarizer",
    "OnlineDiarizer",
    "Turn",
    "TurnSplitter",
    "Windows",
    "ahc",
    "cluster",
    "map_to_users",
    "merge_short_turns",
    "overlap_at_changes",
    "pieces_from_turns",
    "spectral",
    "viterbi",
    "window_spans",
]
