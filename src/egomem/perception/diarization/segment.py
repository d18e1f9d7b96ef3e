"""Windows over speech regions, and the frame labels and turns made from clustered windows."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

import numpy as np

from egomem.errors import InputError
from egomem.perception.diarization.types import FRAME_S, Turn, Windows
from egomem.perception.vad import Segment


def window_spans(
    speech: Iterable[Segment], window_s: float, hop_s: float, min_window_s: float
) -> list[tuple[float, float]]:
    """Windows of `window_s` every `hop_s` inside each speech region (the last one flush with its
    end); a region no longer than a window is one window; regions under `min_window_s`, none."""
    if window_s <= 0 or hop_s <= 0:
        raise InputError("window_s and hop_s must be positive")
    spans: list[tuple[float, float]] = []
    for seg in speech:
        d = seg.duration
        if d < min_window_s:
            continue
        if d <= window_s:
            spans.append((seg.start, seg.end))
            continue
        starts = [seg.start + i * hop_s for i in range(int(np.floor((d - window_s) / hop_s + 1e-9)) + 1)]
        if starts[-1] + window_s < seg.end - 1e-6:
            starts.append(seg.end - window_s)
        spans += [(s, s + window_s) for s in starts]
    return spans


def _frame(t: float) -> int:
    return round(t / FRAME_S)


def speech_mask(speech: list[Segment], n: int) -> np.ndarray:
    mask = np.zeros(n, dtype=bool)
    for seg in speech:
        mask[_frame(seg.start) : _frame(seg.end)] = True
    return mask


def frame_scores(speech: list[Segment], win: Windows, centroids: np.ndarray, resegment: bool = True) -> np.ndarray:
    """scores[frame, cluster] on the FRAME_S grid up to the last speech: the mean cosine to each
    centroid of the windows covering the frame (resegment), or a one-hot of the label of the
    window whose centre is nearest (window labels, the baseline's way). Frames no window covers
    take the nearest window's scores."""
    n = _frame(max((s.end for s in speech), default=0.0)) + 1
    k = centroids.shape[0]
    sims = win.vectors @ centroids.T  # (windows, k)
    centres = np.array([(s + e) / 2 for s, e in win.spans])
    t = (np.arange(n) + 0.5) * FRAME_S
    nearest = np.argmin(np.abs(t[:, None] - centres[None, :]), axis=1)
    if not resegment:
        return np.eye(k)[np.argmax(sims, axis=1)][nearest]
    sums, counts = np.zeros((n, k)), np.zeros(n)
    for (s, e), row in zip(win.spans, sims, strict=True):
        a = _frame(s)
        b = max(_frame(e), a + 1)
        sums[a:b] += row
        counts[a:b] += 1
    scores = sums / np.maximum(counts, 1)[:, None]
    empty = counts == 0
    scores[empty] = sims[nearest[empty]]
    return scores


def viterbi(scores: np.ndarray, penalty: float) -> np.ndarray:
    """Label path maximising the summed scores minus `penalty` per label change."""
    n, k = scores.shape
    if n == 0:
        return np.zeros(0, dtype=int)
    back = np.zeros((n, k), dtype=int)
    acc = scores[0].astype(np.float64).copy()
    for t in range(1, n):
        best = int(np.argmax(acc))
        switch = acc[best] - penalty
        back[t] = np.where(acc >= switch, np.arange(k), best)
        acc = np.maximum(acc, switch) + scores[t]
    path = np.zeros(n, dtype=int)
    path[-1] = int(np.argmax(acc))
    for t in range(n - 1, 0, -1):
        path[t - 1] = back[t, path[t]]
    return path


def turns_from_scores(speech: list[Segment], scores: np.ndarray, penalty: float, min_turn_s: float) -> list[Turn]:
    """Turns from the best label per speech frame (a Viterbi path when `penalty` > 0), clipped to
    the speech regions."""
    mask = speech_mask(speech, scores.shape[0])
    sp = np.flatnonzero(mask)
    labels = np.full(scores.shape[0], -1, dtype=int)
    if sp.size:
        labels[sp] = viterbi(scores[sp], penalty) if penalty > 0 else np.argmax(scores[sp], axis=1)
    turns: list[Turn] = []
    for seg in speech:
        i, b = _frame(seg.start), _frame(seg.end)
        while i < b:
            j = i
            while j < b and labels[j] == labels[i]:
                j += 1
            if labels[i] >= 0:
                turns.append(Turn(max(seg.start, i * FRAME_S), min(seg.end, j * FRAME_S), int(labels[i])))
            i = j
    return merge_short_turns(turns, min_turn_s)


def merge_short_turns(turns: list[Turn], min_turn_s: float) -> list[Turn]:
    """Turns shorter than `min_turn_s` that touch a neighbour take that neighbour's speaker;
    touching turns of one speaker are joined."""
    out: list[Turn] = []
    for i, t in enumerate(turns):
        if min_turn_s > 0 and t.duration < min_turn_s:
            if out and abs(out[-1].end - t.start) < 1e-6:
                t = replace(t, speaker=out[-1].speaker)
            elif i + 1 < len(turns) and abs(turns[i + 1].start - t.end) < 1e-6:
                t = replace(t, speaker=turns[i + 1].speaker)
        if out and out[-1].speaker == t.speaker and abs(out[-1].end - t.start) < 1e-6:
            out[-1] = Turn(out[-1].start, t.end, t.speaker)
        else:
            out.append(t)
    return out


def overlap_at_changes(turns: list[Turn], overlap_s: float) -> list[Turn]:
    """Where two speakers' turns touch, each is extended by up to `overlap_s` (at most half of
    the other turn) into the other, so both are output around the change."""
    if overlap_s <= 0 or len(turns) < 2:
        return turns
    out = []
    for i, t in enumerate(turns):
        start, end = t.start, t.end
        prev = turns[i - 1] if i > 0 else None
        nxt = turns[i + 1] if i + 1 < len(turns) else None
        if prev is not None and prev.speaker != t.speaker and abs(prev.end - t.start) < 1e-6:
            start = t.start - min(overlap_s, prev.duration / 2)
        if nxt is not None and nxt.speaker != t.speaker and abs(nxt.start - t.end) < 1e-6:
            end = t.end + min(overlap_s, nxt.duration / 2)
        out.append(Turn(start, end, t.speaker))
    return out
