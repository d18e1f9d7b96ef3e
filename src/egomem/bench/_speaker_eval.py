"""Scoring for `bench speaker`: one enrolled gallery, scored by the product's PersonIdentifier
under both s-norm cohorts, and the summaries the JSON carries.

The two cohorts are two configurations of the same product code over the same store:
- fixed_cohort: the shipped s-norm cohort only (`voice.min_enrolled_cohort` set out of reach),
  the paper's protocol and the figure comparable with it;
- gallery_cohort: the runtime default, where once `min_enrolled_cohort` users are enrolled
  every other enrolled user's keys join the query's and the key's cohort.
Raw cosine (no s-norm) does not depend on the cohort and is reported once.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from egomem.config import Config
from egomem.identity.identifier import PersonIdentifier
from egomem.identity.types import VoiceObservation
from egomem.perception.voice import VoiceEncoder
from egomem.store.sqlite import SQLiteStore
from egomem_eval.identity.metrics import eer_point

COHORTS = ("fixed_cohort", "gallery_cohort")
NO_SPEECH_SCORE = -1e9  # a query with no speech: the lowest score in every trial


@dataclass(frozen=True)
class Query:
    speaker: str  # the true speaker's enrolled user id
    obs: VoiceObservation | None  # None: the product found no usable speech


@dataclass
class Gallery:
    """Enrolled users, with an identifier per cohort over one store."""

    idents: dict[str, PersonIdentifier]
    users: dict[str, str]  # speaker label -> user id

    @property
    def enrolled_users(self) -> int:
        return len(self.idents["gallery_cohort"].voice_index.user_ids)


def cohort_configs(cfg: Config) -> dict[str, Config]:
    fixed = cfg.voice.model_copy(update={"min_enrolled_cohort": 1 << 30})  # never reached: shipped cohort only
    return {"fixed_cohort": cfg.model_copy(update={"voice": fixed}), "gallery_cohort": cfg}


@contextmanager
def gallery(
    cfg: Config,
    encoder: VoiceEncoder,
    enroll: Mapping[str, Sequence[VoiceObservation]],
    *,
    cohort: np.ndarray | None = None,
) -> Iterator[Gallery]:
    """Enroll each speaker's observations as that user's keys."""
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(Path(tmp) / "bench.db")
        try:
            configs = cohort_configs(cfg)
            first = PersonIdentifier(store, configs["gallery_cohort"], voice_encoder=encoder, cohort=cohort)
            users: dict[str, str] = {}
            with store.transaction():
                for spk, observations in enroll.items():
                    # A speaker whose enrolment found no speech is still a user (with no keys): its
                    # queries then count as misses instead of disappearing from the figures.
                    users[spk] = store.create_user(f"speaker {spk}").id
                    for o in observations:
                        first.enroll(users[spk], voice=o, condition="enroll")
            idents = {"gallery_cohort": first}
            idents["fixed_cohort"] = PersonIdentifier(
                store, configs["fixed_cohort"], voice_encoder=encoder, cohort=cohort
            )
            yield Gallery(idents, users)
        finally:
            store.close()


def score(g: Gallery, queries: Sequence[Query], dev: dict[str, Any] | None = None) -> dict[str, Any]:
    """pass@1 and EER (every query against every enrolled user), raw cosine and per cohort;
    accuracy at the product's threshold for the query's length (`PersonIdentifier.voice_threshold`),
    and, given the `dev` split's metrics, accuracy at the threshold of the dev split's EER point."""
    ident0 = g.idents["gallery_cohort"]
    users = sorted(ident0.voice_index.user_ids)
    n = len(users)
    top: dict[str, list[bool]] = {c: [] for c in ("raw", *COHORTS)}
    trials: dict[str, list[float]] = {c: [] for c in ("raw", *COHORTS)}
    accept: dict[str, list[bool]] = {c: [] for c in COHORTS}
    labels: list[bool] = []
    no_speech = 0
    for q in queries:
        labels += [u == q.speaker for u in users]
        if q.obs is None:
            no_speech += 1
            for c in top:
                top[c].append(False)
                trials[c] += [NO_SPEECH_SCORE] * n
            for c in COHORTS:
                accept[c] += [False] * n
            continue
        per: dict[str, dict[str, float]] = {
            "raw": {h.user_id: h.value for h in ident0.voice_index.search(q.obs.vector, k_users=n)}
        }
        for c in COHORTS:
            per[c] = {m.user_id: m.value for m in g.idents[c].voice_scores(q.obs.vector, k_users=n)}
            thr = g.idents[c].voice_threshold(q.obs.speech_s)
            accept[c] += [per[c][u] > thr for u in users]
        for c, s in per.items():
            top[c].append(max(s, key=lambda u: s[u]) == q.speaker)
            trials[c] += [s[u] for u in users]
    y = np.asarray(labels, dtype=bool)
    out: dict[str, Any] = {"queries": len(queries), "no_speech": no_speech, "enrolled_users": n}
    for c in top:
        m: dict[str, Any] = {"pass_at_1": float(np.mean(top[c])) if top[c] else float("nan")}
        m["eer"], m["eer_threshold"] = _eer(np.asarray(trials[c]), y)
        if c in accept:
            m["accuracy_at_threshold"] = float(np.mean(np.asarray(accept[c]) == y)) if y.size else float("nan")
        if dev is not None and y.size:
            thr = float(dev[c]["eer_threshold"])
            m["dev_eer_threshold"] = thr
            m["accuracy_at_dev_eer_threshold"] = float(np.mean((np.asarray(trials[c]) >= thr) == y))
        out[c] = m
    return out


def _eer(scores: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(EER, its threshold); NaN for a set without both kinds of trials."""
    if y.size == 0 or y.all() or not y.any():
        return float("nan"), float("nan")
    return eer_point(scores, y)


def spread(draws: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Mean / min / max of every metric over noise draws (same nesting as one draw's metrics); counts
    that are the same in every draw (queries, users) are kept as they are."""
    out: dict[str, Any] = {}
    for key, v in draws[0].items():
        if isinstance(v, dict):
            out[key] = spread([d[key] for d in draws])
        elif isinstance(v, float) or (isinstance(v, int) and len({d[key] for d in draws}) > 1):
            vals = np.asarray([d[key] for d in draws], dtype=np.float64)
            out[f"{key}_mean"] = float(vals.mean())
            out[f"{key}_min"] = float(vals.min())
            out[f"{key}_max"] = float(vals.max())
        else:
            out[key] = v
    return out
