"""Short-segment protocols of `bench speaker`: LibriSpeech cut into 0.3-1.5 s speech pieces, and FSDD digits.

LibriSpeech (the evaluation set): every utterance is cut into pieces of speech found by the
product's Silero VAD (`VoiceEncoder.vad`, splitting at pauses of 0.1 s); a speech region longer
than a piece is cut into consecutive pieces whose lengths are drawn uniformly in 0.3-1.5 s
(seeded). Each speaker enrolls its first 3 pieces of 0.5-1.5 s (manifest order); the utterances
those come from give no queries. The speaker's other utterances alternate, in manifest order,
between the development split (1st, 3rd, ...) and the test split (2nd, 4th, ...): thresholds and
short-speech choices are made on dev, the headline is test. Every distractor speaker enrolls 3
pieces of 0.5-1.5 s of its one utterance.

FSDD (8 kHz spoken digits, 6 speakers): each speaker enrolls its first train-split recording of
the digits 0, 1 and 2; its other train recordings are the dev split, the official test split the
test split. The LibriSpeech distractors join at 8 kHz (3 pieces each, resampled), so the channel
does not give them away. FSDD's speakers are in the shipped cohort, so this condition scores
against the shipped cohort without them (`load_cohort(exclude=("fsdd:",))`).
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from egomem.bench._speaker_eval import Query, gallery, score
from egomem.config import Config
from egomem.identity.cohort import load_cohort
from egomem.identity.types import VoiceObservation
from egomem.media import SAMPLE_RATE
from egomem.perception.audio import load_audio
from egomem.perception.voice import VoiceEncoder
from egomem_eval.identity.pieces import PIECE_MAX_S, speech_pieces

ENROLL_MIN_S = 0.5  # enrolment pieces: 0.5-1.5 s
N_ENROLL = 3
# Length bins of the pieces (seconds of cut audio): key -> [low, high).
BINS: dict[str, tuple[float, float]] = {
    "0_3_0_5": (0.3, 0.5),
    "0_5_1_0": (0.5, 1.0),
    "1_0_1_5": (1.0, 1.5 + 1e-6),
    "0_5_1_5": (0.5, 1.5 + 1e-6),  # the target condition
}
FSDD_SR = 8000
FSDD_ENROLL_DIGITS = ("0", "1", "2")


@dataclass(frozen=True)
class Piece:
    speaker: str
    utterance: int  # rank of its utterance in the speaker's manifest order
    seconds: float  # length of the cut speech
    audio: np.ndarray  # the query window at 16 kHz: the piece with its background around it


def cut_set(enc: VoiceEncoder, items: Sequence[tuple[Path, str]], rng: np.random.Generator) -> dict[str, list[Piece]]:
    out: dict[str, list[Piece]] = {}
    ranks: dict[str, int] = {}
    for path, spk in items:
        rank = ranks.get(spk, 0)
        ranks[spk] = rank + 1
        out.setdefault(spk, []).extend(Piece(spk, rank, sec, a) for sec, a in speech_pieces(enc, load_audio(path), rng))
    return out


def _enrolment(pieces: list[Piece]) -> list[Piece]:
    return [p for p in pieces if ENROLL_MIN_S <= p.seconds <= PIECE_MAX_S + 1e-6][:N_ENROLL]


def _observe_all(enc: VoiceEncoder, pieces: Sequence[Piece], sample_rate: int = SAMPLE_RATE) -> list[VoiceObservation]:
    obs = [enc.observe(_at_rate(p.audio, sample_rate), sample_rate) for p in pieces]
    return [o for o in obs if o is not None]


def _at_rate(audio: np.ndarray, sample_rate: int) -> np.ndarray:
    if sample_rate == SAMPLE_RATE:
        return audio
    from scipy.signal import resample_poly

    return resample_poly(audio, sample_rate, SAMPLE_RATE).astype(np.float32)


def _by_bin(
    score_bin: Callable[[str, list[Query]], dict[str, Any]], queries: list[tuple[float, Query]]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, (lo, hi) in BINS.items():
        qs = [q for s, q in queries if lo <= s < hi]
        if qs:
            out[key] = score_bin(key, qs)
    return out


def librispeech_short(
    cfg: Config,
    enc: VoiceEncoder,
    eval_items: Sequence[tuple[Path, str]],
    distract_items: Sequence[tuple[Path, str]],
    seed: int = 0,
    splits_wanted: Sequence[str] = ("dev", "test"),
) -> dict[str, Any]:
    """{"test": {bin: metrics}, "dev": {bin: metrics}, "enrolled_users": n}."""
    rng = np.random.default_rng(seed)
    eval_pieces = cut_set(enc, eval_items, rng)
    distract = cut_set(enc, distract_items, rng)
    enroll: dict[str, list[VoiceObservation]] = {}
    splits: dict[str, list[tuple[float, str, Piece]]] = {"dev": [], "test": []}
    for spk, pieces in eval_pieces.items():
        chosen = _enrolment(pieces)
        enroll[spk] = _observe_all(enc, chosen)
        used = {p.utterance for p in chosen}
        rest = sorted({p.utterance for p in pieces} - used)
        split_of = {u: ("dev" if i % 2 == 0 else "test") for i, u in enumerate(rest)}
        for p in pieces:
            if p.utterance in split_of:
                splits[split_of[p.utterance]].append((p.seconds, spk, p))
    for spk, pieces in distract.items():
        enroll[f"distractor {spk}"] = _observe_all(enc, _enrolment(pieces))
    with gallery(cfg, enc, enroll) as g:
        out: dict[str, Any] = {"enrolled_users": g.enrolled_users}
        for split in ("dev", "test"):  # dev first: test reports accuracy at dev's EER thresholds
            if split not in splits_wanted:
                continue
            queries = [(s, Query(g.users[spk], enc.observe(p.audio))) for s, spk, p in splits[split]]
            out[split] = _by_bin(lambda key, qs: score(g, qs, out.get("dev", {}).get(key)), queries)
    return out


def fsdd(
    cfg: Config,
    enc: VoiceEncoder,
    root: Path,
    distract_items: Sequence[tuple[Path, str]],
    seed: int = 0,
    splits_wanted: Sequence[str] = ("dev", "test"),
) -> dict[str, Any]:
    """{"test": metrics, "dev": metrics} on FSDD's own recordings (all short: digits at 8 kHz)."""
    with open(root / "manifest.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    enroll: dict[str, list[VoiceObservation]] = {}
    splits: dict[str, list[tuple[str, Path]]] = {"dev": [], "test": []}
    enrolled: set[str] = set()
    for digit in FSDD_ENROLL_DIGITS:
        for spk in sorted({r["speaker"] for r in rows}):
            r = next(x for x in rows if x["speaker"] == spk and x["digit"] == digit and x["official_split"] == "train")
            enrolled.add(r["path"])
            obs = enc.observe(load_audio(root / r["path"]), SAMPLE_RATE)
            if obs is not None:
                enroll.setdefault(spk, []).append(obs)
    for r in rows:
        if r["path"] not in enrolled:
            splits["dev" if r["official_split"] == "train" else "test"].append((r["speaker"], root / r["path"]))
    rng = np.random.default_rng(seed)
    for spk, pieces in cut_set(enc, distract_items, rng).items():
        enroll[f"distractor {spk}"] = _observe_all(enc, _enrolment(pieces), FSDD_SR)
    with gallery(cfg, enc, enroll, cohort=load_cohort(exclude=("fsdd:",))) as g:
        out: dict[str, Any] = {"enrolled_users": g.enrolled_users}
        for split in ("dev", "test"):
            if split not in splits_wanted:
                continue
            queries = [Query(g.users[spk], enc.observe(load_audio(p), SAMPLE_RATE)) for spk, p in splits[split]]
            out[split] = score(g, queries, out.get("dev"))
    return out
