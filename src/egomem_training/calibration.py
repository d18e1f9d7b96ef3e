"""Fit the identity calibration: face distance and voice score -> log-likelihood ratio.

    python -m egomem_training.calibration [--data DIR] [--cache DIR] [--out FILE]

Trials come from public data split by identity (egomem_eval.identity.trials): faces from four
face sets, voices from LibriSpeech (long and short pieces, clean and at 10 dB). Each map (face;
voice for long speech; voice for speech shorter than config.voice.short_speech_s) is a linear
logistic calibration fitted on the TRAIN split (egomem.identity.calibration.fit_logistic); its
Cllr and EER on the DEV split are printed and recorded in the JSON's meta. The TEST split is never
read here: `egomem bench fusion` reports it. The output is the shipped
src/egomem/identity/data/calibration.json (or --out).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from egomem.config import Config
from egomem.identity.calibration import CALIBRATION_FILE, Calibration, LinearCalibration, cllr, fit_logistic
from egomem_eval.data import data_root
from egomem_eval.identity.metrics import eer
from egomem_eval.identity.trials import (
    Trials,
    default_cache_dir,
    face_images,
    face_splits,
    face_trials,
    speakers,
    voice_splits,
    voice_trials,
)

SHIPPED = Path(__file__).resolve().parents[1] / "egomem" / "identity" / "data" / CALIBRATION_FILE


def _summary(cal: LinearCalibration, t: Trials, lower_is_same: bool) -> dict[str, Any]:
    llr = cal.llrs(t.score)
    return {
        "trials": int(t.score.size),
        "same": int(t.same.sum()),
        "cllr": round(cllr(llr, t.same), 4),
        "eer": round(eer(-t.score if lower_is_same else t.score, t.same), 4),
    }


def voice_by_length(t: Trials, short_speech_s: float) -> dict[str, Trials]:
    return {"voice_long": t.subset(t.speech_s >= short_speech_s), "voice_short": t.subset(t.speech_s < short_speech_s)}


def fit(cfg: Config, data: Path, cache: Path, *, report_dev: bool = True) -> Calibration:
    images = face_images(cfg, data, cache)
    f_split = face_splits(images)
    spks = speakers(data)
    v_split = voice_splits(spks)
    trials: dict[str, dict[str, Trials]] = {}
    for split in ("train", "dev") if report_dev else ("train",):
        trials[split] = {"face": face_trials(images, f_split, split)}
        trials[split].update(voice_by_length(voice_trials(cfg, spks, v_split, split, cache), cfg.voice.short_speech_s))
    maps = {k: fit_logistic(t.score, t.same) for k, t in trials["train"].items()}
    meta: dict[str, Any] = {
        "fitted_by": "python -m egomem_training.calibration",
        "method": "linear logistic calibration (prior-weighted, effective prior 0.5), fitted on the train split",
        "short_speech_s": cfg.voice.short_speech_s,
        "voice_score": "s-normed (config.voice.snorm = true)",
        "splits": {
            "face_identities": {s: sorted(i for i, x in f_split.items() if x == s) for s in ("train", "dev", "test")},
            "speakers": {s: sorted(i for i, x in v_split.items() if x == s) for s in ("train", "dev", "test")},
        },
    }
    for split in trials:
        meta[split] = {k: _summary(maps[k], t, k == "face") for k, t in trials[split].items()}
    return Calibration(maps["face"], maps["voice_long"], maps["voice_short"], meta)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Fit the face/voice LLR calibration (train split; dev reported).")
    ap.add_argument("--data", type=Path, default=None, help="the data root (default: ../shared/data)")
    ap.add_argument("--cache", type=Path, default=None, help=f"embedding cache (default: {default_cache_dir()})")
    ap.add_argument("--out", type=Path, default=SHIPPED)
    ap.add_argument("--no-dev", action="store_true", help="fit only; skip embedding and scoring the dev split")
    args = ap.parse_args(argv)
    cal = fit(Config(), args.data or data_root(), args.cache or default_cache_dir(), report_dev=not args.no_dev)
    out = cal.to_json()
    for k in ("face", "voice_long", "voice_short"):
        out[k] = {p: round(v, 6) for p, v in out[k].items()}
    args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    report = {k: out[k] for k in ("face", "voice_long", "voice_short")}
    json.dump(report | {s: out["meta"][s] for s in ("train", "dev") if s in out["meta"]}, sys.stdout)
    print(f"\nwritten {args.out}")


if __name__ == "__main__":
    np.seterr(over="ignore")
    main()
