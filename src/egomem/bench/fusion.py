"""`egomem bench fusion`: calibrated face and voice LLRs and their fusion, on the TEST split.

Trials (egomem_eval/identity/trials.py): public face and LibriSpeech voice data split by identity; the
calibration maps were fitted on train (`python -m egomem_training.calibration`), so nothing here
was tuned on these identities. For each modality (face; voice long and short speech, clean and at
10 dB) and for the fusion, the product's maps (identity/calibration.py) turn scores into LLRs, and
the bench reports Cllr (bits; 0 perfect, 1 uninformative), EER, and the cost at the decision
thresholds that config.identity's costs give (KNOWN / UNSURE / NEW), normalised by the cost of
deciding without evidence, with the false-merge and false-split rates.

Fused trials: chimeric people, the usual protocol for face+voice without audio-visual data of the
same people: the split's face identities and speakers are paired in sorted order into persons; a
trial is one voice trial between two such persons with a face query image of the first person
(cycling over its images other than the key) against the second person's key image (its first).
Hard pairs: the closest different-identity face pairs (smallest L2 between images), the closest
different-speaker voice pairs (highest mean s-normed score), and persons built from them (the
k-th closest face pair with the k-th closest voice pair), fused and per modality on their trials.

Options: --set split=dev|test (default test), --set cache=DIR (embedding cache), --quick (two face
sets, the ten-speaker LibriSpeech set only).
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from egomem.bench import BenchOptions, BenchResult, data_root, register
from egomem.config import Config, load_config
from egomem.identity.calibration import (
    Calibration,
    DecisionCosts,
    cllr,
    decision_thresholds,
    expected_cost,
    fuse,
    load_calibration,
)
from egomem_eval.identity.hard_pairs import hard_face_pairs, hard_persons, hard_voice_pairs
from egomem_eval.identity.metrics import eer
from egomem_eval.identity.trials import (
    VOICE_EVAL_SET,
    FaceImage,
    Trials,
    default_cache_dir,
    face_images,
    face_splits,
    face_trials,
    speakers,
    voice_splits,
    voice_trials,
)

HARD_PAIRS = 5  # listed


@dataclass
class Fused:
    face: np.ndarray  # face LLR per trial
    voice: np.ndarray  # voice LLR per trial
    same: np.ndarray

    @property
    def fused(self) -> np.ndarray:
        return np.array([fuse(f, v) for f, v in zip(self.face, self.voice, strict=True)])


def llr_metrics(llr: np.ndarray, same: np.ndarray, costs: DecisionCosts) -> dict[str, Any]:
    if not same.any() or same.all():
        return {"trials": int(same.size), "same": int(same.sum())}
    return {
        "trials": int(same.size),
        "same": int(same.sum()),
        "cllr": cllr(llr, same),
        "eer": eer(llr, same),
        **expected_cost(llr, same, costs),
    }


def voice_llrs(cal: Calibration, t: Trials, short_speech_s: float) -> np.ndarray:
    return np.array([cal.voice(s, short_speech_s).llr(x) for x, s in zip(t.score, t.speech_s, strict=True)])


def fused_trials(
    cal: Calibration, images: list[FaceImage], vt: Trials, persons: dict[str, str], short_speech_s: float
) -> Fused:
    """Trials between persons (speaker -> face identity): each voice trial between two persons,
    with a face query image of the first person against the key image of the second."""
    by_id: dict[str, list[FaceImage]] = defaultdict(list)
    for im in images:
        by_id[im.identity].append(im)
    turn: dict[str, int] = defaultdict(int)
    f, v, y = [], [], []
    v_llr = voice_llrs(cal, vt, short_speech_s)
    for i, (a, b) in enumerate(zip(vt.a, vt.b, strict=True)):
        if a not in persons or b not in persons:
            continue
        qa, kb = by_id[persons[a]], by_id[persons[b]]
        q = qa[1 + turn[a] % (len(qa) - 1)]
        turn[a] += 1
        f.append(cal.face.llr(float(np.linalg.norm(q.vector - kb[0].vector))))
        v.append(float(v_llr[i]))
        y.append(bool(vt.same[i]))
    return Fused(np.asarray(f), np.asarray(v), np.asarray(y, bool))


def _row(name: str, m: dict[str, Any]) -> list[Any]:
    keys = ("cllr", "eer", "normalised_cost", "false_merge_rate", "false_split_rate")
    unsure = m.get("unsure_same_rate", float("nan")), m.get("unsure_different_rate", float("nan"))
    return [name, m["trials"], m["same"], *(m.get(k, float("nan")) for k in keys), *unsure]


HEADER = [
    "what",
    "trials",
    "same",
    "Cllr",
    "EER",
    "cost (norm.)",
    "merge rate",
    "split rate",
    "unsure|same",
    "unsure|diff",
]


@register("fusion")
def run(options: BenchOptions) -> BenchResult:
    t0 = time.perf_counter()
    cfg: Config = load_config()
    data = data_root(options)
    split = options.extra.get("split", "test")
    cache = Path(options.extra["cache"]) if "cache" in options.extra else default_cache_dir()
    c = cfg.identity
    costs = DecisionCosts(c.prior, c.merge_cost, c.split_cost, c.unsure_cost)
    known, new = decision_thresholds(costs)
    cal = load_calibration(c.calibration_file)
    short_s = cfg.voice.short_speech_s
    face_sets = ("faces_lfw_subset_10x10", "faces_deepface") if options.quick else None
    images = face_images(cfg, data, cache, *([face_sets] if face_sets else []))
    f_split = face_splits(images)
    spks = speakers(data)
    if options.quick:
        spks = [s for s in spks if s.name.startswith(VOICE_EVAL_SET)]
    v_split = voice_splits(spks)
    ft = face_trials(images, f_split, split)
    vt = voice_trials(cfg, spks, v_split, split, cache)

    metrics: dict[str, Any] = {
        "split": split,
        "costs": {"prior": c.prior, "merge": c.merge_cost, "split": c.split_cost, "unsure": c.unsure_cost},
        "known_llr": known,
        "new_llr": new,
        "calibration": cal.to_json(),
    }
    rows: list[list[Any]] = []
    metrics["face"] = llr_metrics(cal.face.llrs(ft.score), ft.same, costs)
    rows.append(_row("face", metrics["face"]))
    v_all = voice_llrs(cal, vt, short_s)
    for name, keep in (
        ("voice", np.ones(vt.same.size, bool)),
        ("voice long clean", (vt.speech_s >= short_s) & ~vt.noisy),
        ("voice long 10 dB", (vt.speech_s >= short_s) & vt.noisy),
        ("voice short clean", (vt.speech_s < short_s) & ~vt.noisy),
        ("voice short 10 dB", (vt.speech_s < short_s) & vt.noisy),
    ):
        metrics[name.replace(" ", "_")] = llr_metrics(v_all[keep], vt.same[keep], costs)
        rows.append(_row(name, metrics[name.replace(" ", "_")]))

    n_images = {im.identity: 0 for im in images}
    for im in images:
        n_images[im.identity] += 1
    face_ids = sorted(i for i, s in f_split.items() if s == split and n_images[i] > 1)
    spk_ids = sorted(set(vt.a))
    persons = dict(zip(spk_ids, face_ids, strict=False))
    fu = fused_trials(cal, images, vt, persons, short_s)
    fused_rows: list[list[Any]] = []
    for name, llr in (("face (same trials)", fu.face), ("voice (same trials)", fu.voice), ("fused", fu.fused)):
        key = "persons_" + name.split(" ")[0]
        metrics[key] = llr_metrics(llr, fu.same, costs)
        fused_rows.append(_row(name, metrics[key]))
    metrics["persons"] = len(persons)

    hf, hv = hard_face_pairs(ft), hard_voice_pairs(vt)
    metrics["hard_face_pairs"] = [{"a": a, "b": b, "l2": d} for a, b, d in hf[:HARD_PAIRS]]
    metrics["hard_voice_pairs"] = [{"a": a, "b": b, "mean_snorm": s} for a, b, s in hv[:HARD_PAIRS]]
    hp = hard_persons(hf, hv, n_images)
    hard = fused_trials(cal, images, vt, hp, short_s)
    hard_rows: list[list[Any]] = []
    metrics["hard_persons"] = hp
    for name, llr in (("face", hard.face), ("voice", hard.voice), ("fused", hard.fused)):
        metrics[f"hard_{name}"] = llr_metrics(llr, hard.same, costs)
        hard_rows.append(_row(f"hard pairs: {name}", metrics[f"hard_{name}"]))
    metrics["seconds"] = time.perf_counter() - t0
    pair_rows = [["face", a, b, f"L2 {d:.3f}"] for a, b, d in hf[:HARD_PAIRS]]
    pair_rows += [["voice", a, b, f"mean s-norm {s:.2f}"] for a, b, s in hv[:HARD_PAIRS]]
    tables = [
        (f"per modality, {split} split (LLR from the shipped calibration)", HEADER, rows),
        (f"persons (face identity + speaker), {split} split: {len(persons)} persons", HEADER, fused_rows),
        (f"hard pairs, {split} split: {len(hp) // 2} pairs of persons", HEADER, hard_rows),
        ("closest different-identity pairs", ["modality", "a", "b", "score"], pair_rows),
    ]
    notes = [
        f"thresholds from config.identity costs: KNOWN at fused LLR >= {known:.2f}, NEW at <= {new:.2f}, else UNSURE",
        "cost: prior-weighted expected cost per trial at those thresholds / cost of the best decision without evidence",
        "calibration fitted on the train split (python -m egomem_training.calibration); splits by identity",
    ]
    return BenchResult("fusion", metrics, tables, notes)
