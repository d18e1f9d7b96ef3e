"""Splitting one finished user turn at speaker changes, before it is transcribed and attributed.

The turn detector cuts turns at pauses, but in meetings and calls people follow each other with no
pause, so one turn may hold several people; attributed by one voice embedding, all of it goes to one
person (a merge). `TurnSplitter` runs the offline diarizer over the turn as one speech region
(resemblyzer windows sliding over it, average-linkage clustering, frame re-segmentation: the same
code and encoder as `Diarizer`), and cuts the turn where the speaker changes. A piece shorter than
`min_piece_s` joins a neighbour: each piece must hold enough speech for its own voice embedding.
Deterministic (no sampling; torch on one thread).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from egomem.errors import InputError
from egomem.media import SAMPLE_RATE
from egomem.perception.diarization.offline import Diarizer
from egomem.perception.diarization.types import DiarizationConfig, Turn
from egomem.perception.vad import Segment


class TurnSplitter:
    """Pieces of a turn's audio, one per stretch of one speaker, as (start, end) seconds in it."""

    def __init__(
        self,
        diarizer: Diarizer,
        *,
        threshold: float,
        min_piece_s: float = 1.6,
        window_s: float = 2.0,
        hop_s: float = 0.5,
    ) -> None:
        if threshold <= 0 or min_piece_s <= 0:
            raise InputError("turn split threshold and min_piece_s must be positive")
        self.min_piece_s = min_piece_s
        config = replace(
            DiarizationConfig(),
            window_s=window_s,
            hop_s=hop_s,
            method="ahc",
            threshold=threshold,
            min_cluster_s=min_piece_s,  # a voice heard for less than a piece is no second speaker
            resegment=True,
            change_penalty=0.0,
            min_turn_s=min_piece_s,
            overlap_s=0.0,  # a partition of the turn, not overlapping speakers
        )
        self.diarizer = diarizer.with_config(config)

    def split(self, audio: np.ndarray) -> list[tuple[float, float]]:
        """Consecutive pieces covering the whole audio (one piece when no change is found or the
        audio is too short to hold two pieces; none for empty audio)."""
        return [(s, e) for s, e, _ in self.split_labelled(audio)]

    def split_labelled(self, audio: np.ndarray) -> list[tuple[float, float, int]]:
        """As `split`, each piece with its speaker label within this turn: pieces with one label are
        one voice, pieces with different labels are voices the clustering told apart."""
        x = np.asarray(audio, dtype=np.float32).reshape(-1)
        dur = x.size / SAMPLE_RATE
        if dur <= 0:
            return []
        if dur < 2 * self.min_piece_s or float(np.max(np.abs(x))) < 1e-4:
            return [(0.0, dur, 0)]
        turns = self.diarizer.diarize_regions(x, [Segment(0.0, dur)]).turns
        return labelled_pieces(turns, dur, self.min_piece_s)


def pieces_from_turns(turns: list[Turn], duration: float, min_piece_s: float) -> list[tuple[float, float]]:
    """Consecutive pieces from diarized turns: cut at each change of speaker (in the middle of any
    gap); a piece under `min_piece_s` joins its shorter neighbour and takes that neighbour's speaker,
    and neighbours of one speaker are joined. The first starts at 0, the last ends at `duration`."""
    return [(s, e) for s, e, _ in labelled_pieces(turns, duration, min_piece_s)]


def labelled_pieces(turns: list[Turn], duration: float, min_piece_s: float) -> list[tuple[float, float, int]]:
    """`pieces_from_turns` with each piece's speaker label."""
    runs: list[tuple[float, float, int]] = []
    for t in sorted(turns, key=lambda t: t.start):
        if runs and runs[-1][2] == t.speaker:
            runs[-1] = (runs[-1][0], max(runs[-1][1], t.end), t.speaker)
        else:
            runs.append((t.start, t.end, t.speaker))
    if len(runs) < 2:
        return [(0.0, duration, runs[0][2] if runs else 0)]
    cuts = [0.0] + [(runs[i][1] + runs[i + 1][0]) / 2 for i in range(len(runs) - 1)] + [duration]
    pieces = [(cuts[i], cuts[i + 1], runs[i][2]) for i in range(len(runs))]
    while len(pieces) > 1:
        lengths = [e - s for s, e, _ in pieces]
        i = int(np.argmin(lengths))
        if lengths[i] >= min_piece_s:
            break
        j = i + 1 if i == 0 or (i < len(pieces) - 1 and lengths[i + 1] < lengths[i - 1]) else i - 1
        a, b = min(i, j), max(i, j)
        pieces[a : b + 1] = [(pieces[a][0], pieces[b][1], pieces[j][2])]
        pieces = _join_same_speaker(pieces)
    return pieces


def _join_same_speaker(pieces: list[tuple[float, float, int]]) -> list[tuple[float, float, int]]:
    out: list[tuple[float, float, int]] = []
    for p in pieces:
        if out and out[-1][2] == p[2]:
            out[-1] = (out[-1][0], p[1], p[2])
        else:
            out.append(p)
    return out
