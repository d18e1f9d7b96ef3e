"""`egomem bench speaker`: speaker identification pass@1 (raw cosine and s-norm) and EER, clean and noisy.

Protocol: on the evaluation set (default speech_librispeech_test_other_10spk) the first
`enroll` utterances of each speaker (manifest order) are enrolled as keys, every other
utterance is a query; the speakers of the distractor set (default
speech_librispeech_train_clean_100_1utt, one utterance each) are enrolled too. Every
clip goes through the live pipeline (VoiceEncoder: Silero VAD, gating, resemblyzer),
and scoring goes through PersonIdentifier (the same index and s-norm the robot uses),
with the shipped cohort (pyannote AMI-style meetings + FSDD speakers: disjoint from
both sets here). White noise at 20/10/5 dB SNR is added to the queries only.
Trials for EER: every query against every enrolled user (target = its own speaker).
Nothing here is tuned on these queries: thresholds come from config.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from egomem.bench import BenchOptions, BenchResult, data_root, register
from egomem.config import Config, load_config
from egomem.identity.identifier import PersonIdentifier
from egomem.identity.labelled import AUDIO_EXT, load_set
from egomem.identity.metrics import accuracy_at, eer
from egomem.identity.types import VoiceObservation
from egomem.perception.audio import add_noise, load_audio
from egomem.perception.voice import VoiceEncoder
from egomem.store.sqlite import SQLiteStore

EVAL_SET = "speech_librispeech_test_other_10spk"
DISTRACTORS = "speech_librispeech_train_clean_100_1utt"
SNRS = (20.0, 10.0, 5.0)


def score_queries(ident: PersonIdentifier, queries: list[tuple[str, VoiceObservation | None]]) -> dict[str, Any]:
    users = sorted(ident.voice_index.user_ids)
    thr = ident.config.voice.threshold
    top_raw, top_sn, lat = [], [], []
    raw_scores, sn_scores, labels = [], [], []
    no_speech = 0
    for spk, obs in queries:
        if obs is None:  # no speech found: a miss for pass@1, lowest score for every trial
            no_speech += 1
            top_raw.append(False)
            top_sn.append(False)
            for u in users:
                raw_scores.append(-np.inf)
                sn_scores.append(-np.inf)
                labels.append(u == spk)
            continue
        raw = {h.user_id: h.value for h in ident.voice_index.search(obs.vector, k_users=len(users))}
        t0 = time.perf_counter()
        sn = {m.user_id: m.value for m in ident.voice_scores(obs.vector, k_users=len(users))}
        lat.append((time.perf_counter() - t0) * 1000)
        top_raw.append(max(raw, key=lambda u: raw[u]) == spk)
        top_sn.append(max(sn, key=lambda u: sn[u]) == spk)
        for u in users:
            raw_scores.append(raw[u])
            sn_scores.append(sn[u])
            labels.append(u == spk)
    y = np.asarray(labels)
    rs = np.nan_to_num(np.asarray(raw_scores), neginf=-1e9)
    ss = np.nan_to_num(np.asarray(sn_scores), neginf=-1e9)
    return {
        "queries": len(queries),
        "no_speech": no_speech,
        "pass_at_1": float(np.mean(top_raw)),
        "pass_at_1_snorm": float(np.mean(top_sn)),
        "eer_raw": eer(rs, y),
        "eer": eer(ss, y),
        "accuracy": accuracy_at(ss, y, thr),
        "latency_ms_p50": float(np.percentile(lat, 50)) if lat else float("nan"),
    }


def retrieval_latency(ident: PersonIdentifier, n_keys: int, repeats: int) -> float:
    """ms (p50) of one s-normed retrieval against at least `n_keys` enrolled voice keys (synthetic extra users)."""
    rng = np.random.default_rng(0)
    have = len(ident.voice_index)
    extra = max(0, n_keys - have)
    vecs = rng.standard_normal((extra, 256)).astype(np.float32)
    with ident.store.transaction():
        for v in vecs:
            ident.enroll(None, voice=VoiceObservation(v / np.linalg.norm(v), 1.0))
    q = rng.standard_normal(256).astype(np.float32)
    lat = []
    for _ in range(repeats):
        ident._key_stats.clear()  # worst case: no cached key statistics
        t0 = time.perf_counter()
        ident.voice_scores(q)
        lat.append((time.perf_counter() - t0) * 1000)
    return float(np.percentile(lat, 50))


@register("speaker")
def run(options: BenchOptions) -> BenchResult:
    cfg: Config = load_config()
    data = data_root(options)
    eval_root = data / options.extra.get("eval", EVAL_SET)
    if not eval_root.is_dir():  # --data points at the evaluation set itself
        eval_root = data
    distract_root = data / options.extra.get("distractors", DISTRACTORS)
    n_enroll = int(options.extra.get("enroll", "3"))
    snrs = [float(x) for x in options.extra["snrs"].split(",")] if "snrs" in options.extra else list(SNRS)
    ev = load_set(eval_root, AUDIO_EXT)
    by_spk: dict[str, list[Path]] = {}
    for p, spk in ev.items:
        by_spk.setdefault(spk, []).append(p)
    distract = load_set(distract_root, AUDIO_EXT).items if distract_root.is_dir() else []
    if options.quick:
        by_spk = {s: ps[: n_enroll + 2] for s, ps in list(by_spk.items())[:3]}
        distract = distract[:4]
        snrs = snrs[1:2]
    enc = VoiceEncoder(cfg.voice)
    rng = np.random.default_rng(2024)
    metrics: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(Path(tmp) / "bench.db")
        ident = PersonIdentifier(store, cfg, voice_encoder=enc)
        t_embed, audio_s = 0.0, 0.0
        queries_audio: list[tuple[str, np.ndarray]] = []
        for spk, paths in by_spk.items():
            uid = store.create_user(f"speaker {spk}").id
            for p in paths[:n_enroll]:
                obs = enc.observe(load_audio(p))
                if obs is not None:
                    ident.enroll(uid, voice=obs, condition="enroll")
            queries_audio += [(uid, load_audio(p)) for p in paths[n_enroll:]]
        for p, spk in distract:
            obs = enc.observe(load_audio(p))
            if obs is not None:
                ident.enroll(None, voice=obs, name=f"distractor {spk}")
        conditions: list[tuple[str, float | None]] = [("clean", None)] + [(f"snr_{int(s)}db", s) for s in snrs]
        rows = []
        for cname, snr in conditions:
            qs = []
            for uid, a in queries_audio:
                x = a if snr is None else add_noise(a, snr, rng)
                t0 = time.perf_counter()
                qs.append((uid, enc.observe(x)))
                t_embed += time.perf_counter() - t0
                audio_s += a.size / 16000
            m = score_queries(ident, qs)
            rows.append(
                [
                    cname,
                    m["queries"],
                    m["no_speech"],
                    m["pass_at_1"],
                    m["pass_at_1_snorm"],
                    m["eer_raw"],
                    m["eer"],
                    m["accuracy"],
                ]
            )
            if snr is None:
                metrics.update(m)
            else:
                metrics[cname] = m
        metrics["enrolled_users"] = len(ident.voice_index.user_ids)
        metrics["embed_rtf"] = t_embed / audio_s if audio_s else float("nan")
        lat_ms = retrieval_latency(ident, 200 if options.quick else 1_000, 5 if options.quick else 20)
        metrics["retrieval_ms_p50_1000_keys"] = lat_ms
        store.close()
    result = {eval_root.name: metrics}
    tables = [
        (
            f"speaker identification on {eval_root.name} ({n_enroll} enrolled utterances per speaker, "
            f"{metrics['enrolled_users']} enrolled users incl. distractors)",
            ["condition", "queries", "no_speech", "pass@1", "pass@1_snorm", "eer_raw", "eer_snorm", "acc@thr"],
            rows,
        ),
        (
            "latency",
            ["what", "value"],
            [
                ["embed real-time factor (VAD+gating+resemblyzer)", metrics["embed_rtf"]],
                [f"one s-normed retrieval, {'200' if options.quick else '1,000'}+ keys, ms p50", lat_ms],
            ],
        ),
    ]
    return BenchResult(
        "speaker",
        result,
        tables,
        [
            f"threshold {cfg.voice.threshold} (s-norm) from config",
            "white noise added to queries only; enrollment is clean",
        ],
    )
