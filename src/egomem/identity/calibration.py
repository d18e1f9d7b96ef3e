"""Calibrated log-likelihood ratios per modality, and the three-way decision they feed.

Each modality's raw score (face: dlib L2 distance to a user's nearest key; voice: the s-normed
score, one map for long and one for short speech) becomes a log-likelihood ratio
LLR = log p(score | same person) / p(score | different person) through a linear map
`a * score + b` fitted by logistic regression (the standard "linear calibration" of speaker
verification, as in FoCal/BOSARIS): the objective weights same and different trials to an
effective prior and subtracts that prior's log-odds, so the output is an LLR and not a posterior.
The maps are fitted on public data split by identity (`python -m egomem_training.calibration`)
and shipped as `identity/data/calibration.json`.

LLRs of independent modalities add, so a face that does not match is evidence *against*, as
strong as its LLR says. The decision (`decision_thresholds`) follows from stated costs: a false
merge (someone taken for an enrolled user), a false split (an enrolled user taken for someone
new), and asking/holding back (UNSURE), with a prior that the person is the candidate.
"""

from __future__ import annotations

import json
import math
from contextlib import nullcontext
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from egomem.errors import InputError

CALIBRATION_FILE = "calibration.json"
LLR_CLIP = 30.0  # |LLR| beyond this is certainty either way; keeps sums finite for far-off scores


@dataclass(frozen=True)
class LinearCalibration:
    """LLR = slope * score + offset (clipped to +-LLR_CLIP)."""

    slope: float
    offset: float

    def llr(self, score: float) -> float:
        if math.isnan(score):
            return -LLR_CLIP
        if math.isinf(score):  # e.g. no face key at all: infinitely far
            return LLR_CLIP if score * self.slope > 0 else -LLR_CLIP
        return float(max(-LLR_CLIP, min(LLR_CLIP, self.slope * score + self.offset)))

    def llrs(self, scores: np.ndarray) -> np.ndarray:
        s = np.asarray(scores, dtype=np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            out = self.slope * s + self.offset
        return np.clip(np.nan_to_num(out, nan=-LLR_CLIP, posinf=LLR_CLIP, neginf=-LLR_CLIP), -LLR_CLIP, LLR_CLIP)


@dataclass(frozen=True)
class Calibration:
    """The shipped maps: face distance, long-speech voice score, short-speech voice score."""

    face: LinearCalibration
    voice_long: LinearCalibration
    voice_short: LinearCalibration
    meta: dict[str, Any]

    def voice(self, speech_s: float, short_speech_s: float) -> LinearCalibration:
        return self.voice_short if speech_s < short_speech_s else self.voice_long

    def to_json(self) -> dict[str, Any]:
        return {
            "face": asdict(self.face),
            "voice_long": asdict(self.voice_long),
            "voice_short": asdict(self.voice_short),
            "meta": self.meta,
        }


def load_calibration(path: Path | None = None) -> Calibration:
    """The calibration maps from `path` or the shipped file; InputError with one line if unreadable."""
    try:
        ref = resources.files("egomem.identity") / "data" / CALIBRATION_FILE
        with resources.as_file(ref) if path is None else nullcontext(path) as p:
            raw = json.loads(Path(p).read_text(encoding="utf-8"))
        maps = {k: LinearCalibration(float(raw[k]["slope"]), float(raw[k]["offset"])) for k in MODALITY_KEYS}
    except (OSError, KeyError, TypeError, ValueError) as exc:
        raise InputError(f"cannot read the identity calibration file: {exc}") from exc
    if maps["face"].slope >= 0 or maps["voice_long"].slope <= 0 or maps["voice_short"].slope <= 0:
        raise InputError("identity calibration: face LLR must fall with distance, voice LLR rise with score")
    return Calibration(maps["face"], maps["voice_long"], maps["voice_short"], dict(raw.get("meta", {})))


MODALITY_KEYS = ("face", "voice_long", "voice_short")


def fuse(*llrs: float | None) -> float:
    """The fused LLR of independent modalities: their sum (a modality not observed adds nothing)."""
    return float(sum(x for x in llrs if x is not None))


def logit(p: float) -> float:
    return math.log(p / (1.0 - p))


def fit_logistic(scores: np.ndarray, same: np.ndarray, prior: float = 0.5) -> LinearCalibration:
    """Linear logistic calibration: minimise the prior-weighted cross-entropy of
    sigmoid(a*s + b + logit(prior)) against the labels, each class weighted to `prior`, so
    a*s + b is an LLR. Raises InputError without both kinds of trial."""
    from scipy.optimize import minimize

    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    y = np.asarray(same, dtype=bool).reshape(-1)
    ok = np.isfinite(s)
    s, y = s[ok], y[ok]
    if s.size != y.size or not y.any() or y.all():
        raise InputError("calibration needs both same-person and different-person trials")
    mu, sd = float(s.mean()), float(s.std()) or 1.0
    z = (s - mu) / sd  # standardised for a well-conditioned fit
    lo = logit(prior)
    w_t, w_n = prior / y.sum(), (1.0 - prior) / (~y).sum()

    def loss(p: np.ndarray) -> tuple[float, np.ndarray]:
        x = p[0] * z + p[1] + lo
        # log(1 + exp(-x)) for same, log(1 + exp(x)) for different
        lt, ln = np.logaddexp(0.0, -x[y]), np.logaddexp(0.0, x[~y])
        f = w_t * lt.sum() + w_n * ln.sum()
        gt = -w_t / (1.0 + np.exp(x[y]))  # d/dx of log(1+e^-x)
        gn = w_n / (1.0 + np.exp(-x[~y]))
        g = np.array([(gt * z[y]).sum() + (gn * z[~y]).sum(), gt.sum() + gn.sum()])
        return float(f), g

    res = minimize(loss, np.array([1.0, 0.0]), jac=True, method="L-BFGS-B")
    a, b = float(res.x[0]), float(res.x[1])
    return LinearCalibration(slope=a / sd, offset=b - a * mu / sd)


def cllr(llrs: np.ndarray, same: np.ndarray) -> float:
    """Log-likelihood-ratio cost in bits (0 perfect, 1 = an uninformative system that says LLR 0)."""
    x = np.asarray(llrs, dtype=np.float64).reshape(-1)
    y = np.asarray(same, dtype=bool).reshape(-1)
    if x.size != y.size or not y.any() or y.all():
        raise InputError("Cllr needs both same-person and different-person trials")
    c_t = np.logaddexp(0.0, -x[y]).mean() / math.log(2)
    c_n = np.logaddexp(0.0, x[~y]).mean() / math.log(2)
    return float((c_t + c_n) / 2)


@dataclass(frozen=True)
class DecisionCosts:
    """Costs of the three outcomes when wrong, and the prior that an observed person is the candidate."""

    prior: float  # P(the person is the best-matching enrolled user) before the evidence
    merge_cost: float  # KNOWN for someone else: their life written onto another person
    split_cost: float  # NEW for an enrolled user: a duplicate person, a name asked again
    unsure_cost: float  # UNSURE: memory held back, the person may be asked


def decision_thresholds(c: DecisionCosts) -> tuple[float, float]:
    """(known_llr, new_llr): KNOWN when the fused LLR >= known_llr, NEW when <= new_llr, UNSURE between.

    Bayes decision with posterior P = P(same | evidence): expected costs are (1-P)*merge for KNOWN,
    P*split for NEW, unsure_cost for UNSURE. KNOWN beats UNSURE when P >= 1 - unsure/merge and NEW
    beats UNSURE when P <= unsure/split; when those bounds cross (asking costs more than the
    binary error at the crossing) the band closes and KNOWN/NEW meet at P = merge/(merge+split)."""
    if not 0.0 < c.prior < 1.0:
        raise InputError(f"identity prior must be in (0, 1), got {c.prior}")
    if min(c.merge_cost, c.split_cost, c.unsure_cost) <= 0:
        raise InputError("identity decision costs must be > 0")
    prior_lo = logit(c.prior)
    p_known = 1.0 - c.unsure_cost / c.merge_cost
    p_new = c.unsure_cost / c.split_cost
    if p_known <= p_new or p_known <= 0.0 or p_new >= 1.0:
        t = math.log(c.merge_cost / c.split_cost) - prior_lo
        return t, t
    return logit(p_known) - prior_lo, logit(p_new) - prior_lo


def expected_cost(llrs: np.ndarray, same: np.ndarray, c: DecisionCosts) -> dict[str, float]:
    """The cost per trial at the thresholds of `c`, same and different trials weighted to the prior,
    normalised by the cost of the best decision without evidence (so 1.0 = no better than guessing);
    with the rates of each outcome."""
    x = np.asarray(llrs, dtype=np.float64).reshape(-1)
    y = np.asarray(same, dtype=bool).reshape(-1)
    if not y.any() or y.all():
        raise InputError("cost needs both same-person and different-person trials")
    known, new = decision_thresholds(c)
    t, n = x[y], x[~y]
    split = float(np.mean(t <= new)) if known != new else float(np.mean(t < known))
    unsure_t = float(np.mean((t > new) & (t < known)))
    merge = float(np.mean(n >= known))
    unsure_n = float(np.mean((n > new) & (n < known)))
    cost = c.prior * (split * c.split_cost + unsure_t * c.unsure_cost) + (1 - c.prior) * (
        merge * c.merge_cost + unsure_n * c.unsure_cost
    )
    default = min(c.prior * c.split_cost, (1 - c.prior) * c.merge_cost, c.unsure_cost)
    return {
        "cost": float(cost),
        "normalised_cost": float(cost / default),
        "false_merge_rate": merge,
        "false_split_rate": split,
        "unsure_same_rate": unsure_t,
        "unsure_different_rate": unsure_n,
    }
