"""The hardest different-identity pairs of the labelled face and voice sets, and persons made of
them (a face identity with a speaker): shared by `bench fusion` (their trials) and `bench
identity` (worlds that hold such pairs)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from egomem_eval.identity.trials import Trials

HARD_PERSONS = 3  # pairs of persons built from the hardest pairs


def hard_face_pairs(ft: Trials) -> list[tuple[str, str, float]]:
    """(a, b, smallest L2 between an image of a and one of b), closest first, different identities only."""
    best: dict[tuple[str, str], float] = {}
    for s, same, a, b in zip(ft.score, ft.same, ft.a, ft.b, strict=True):
        if not same:
            k = (min(a, b), max(a, b))
            best[k] = min(best.get(k, np.inf), float(s))
    return [(a, b, d) for (a, b), d in sorted(best.items(), key=lambda kv: kv[1])]


def hard_voice_pairs(vt: Trials) -> list[tuple[str, str, float]]:
    """(a, b, mean s-normed score between them), highest first, different speakers only."""
    scores: dict[tuple[str, str], list[float]] = defaultdict(list)
    for s, same, a, b in zip(vt.score, vt.same, vt.a, vt.b, strict=True):
        if not same:
            scores[(min(a, b), max(a, b))].append(float(s))
    mean = {k: float(np.mean(v)) for k, v in scores.items()}
    return [(a, b, m) for (a, b), m in sorted(mean.items(), key=lambda kv: -kv[1])]


def hard_persons(
    faces: list[tuple[str, str, float]],
    voices: list[tuple[str, str, float]],
    n_images: dict[str, int],
    pairs: int = HARD_PERSONS,
) -> dict[str, str]:
    """speaker -> face identity, the k-th closest face pair given the k-th closest voice pair (disjoint),
    for up to `pairs` pairs of persons."""
    out: dict[str, str] = {}
    used: set[str] = set()
    fs = [(a, b) for a, b, _ in faces if n_images.get(a, 0) > 1 and n_images.get(b, 0) > 1]
    vs = [(a, b) for a, b, _ in voices]
    while fs and vs and len(out) < 2 * pairs:
        fa, fb = fs.pop(0)
        if fa in used or fb in used:
            continue
        pair = next(((a, b) for a, b in vs if a not in out and b not in out), None)
        if pair is None:
            break
        vs.remove(pair)
        out[pair[0]], out[pair[1]] = fa, fb
        used |= {fa, fb}
    return out
