"""`egomem bench trigger`: the episodic trigger (BiGRU) against the rule baseline.

Held-out synthetic streams from real speech of speakers never seen in training
(egomem_eval/trigger/synth.py: LibriSpeech test-other users, evaluation background speech and
TV recordings); the speaking channel is what the runtime produces: the template
responder's lines in the product's TTS voice (egomem_eval/assistant_lines.py), timed as the
agent answers. Five conditions (synth.CONDITIONS): runtime, back_to_back, one_word,
long_silence, tv; each stream in a clean and a noised copy. Metrics per condition and
pooled over all of them: mean step Jaccard of session spans, span_match@N
precision/recall/F1 of session boundaries for N = 0, 5, 10; and the time to tag 8192
steps (network + Viterbi on features; feature extraction timed apart).

Options (--set k=v): streams (pairs per condition, default 20 → 200 streams; --quick: 1),
conditions (comma-separated, default all), workers (feature processes, default 2;
--quick: 0 = in-process), cache (a folder to cache features in; none by default).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from egomem.bench import BenchOptions, BenchResult, data_root, register
from egomem.errors import InputError
from egomem.memory.trigger.features import FeatureExtractor
from egomem.memory.trigger.metrics import SpanCounts, jaccard, sessions
from egomem.memory.trigger.rules import RuleTrigger
from egomem.memory.trigger.tagger import CHUNK_STEPS, EpisodicTrigger
from egomem_eval.assistant_lines import assistant_voice
from egomem_eval.trigger.dataset import Example, examples
from egomem_eval.trigger.synth import CONDITIONS, AssistantVoice, load_pools, make_pair

EVAL_SEED0 = 0
PAPER = {"clean": {"jaccard": 0.992, "f1_at_5": 0.986}, "noised": {"jaccard": 0.989, "f1_at_5": 0.982}}
ROW_KEYS = ("jaccard", "f1_at_0", "f1_at_5", "f1_at_10", "precision_at_5", "recall_at_5")


def _evaluate(pred: list[list[tuple[int, int]]], data: list[Example]) -> dict[str, float]:
    out: dict[str, float] = {
        "jaccard": float(np.mean([jaccard(e.sessions, p, e.labels.size) for p, e in zip(pred, data, strict=True)]))
    }
    for n in (0, 5, 10):
        c = SpanCounts()
        for p, e in zip(pred, data, strict=True):
            c.add(e.sessions, p, n)
        out[f"precision_at_{n}"], out[f"recall_at_{n}"], out[f"f1_at_{n}"] = c.precision, c.recall, c.f1
    out["streams"] = len(data)
    out["true_sessions"] = sum(len(e.sessions) for e in data)
    out["predicted_sessions"] = sum(len(p) for p in pred)
    return out


def _time_per_chunk(fn: Any, feats: np.ndarray, repeats: int) -> float:
    fn(feats)  # warm-up
    t0 = time.perf_counter()
    for _ in range(repeats):
        fn(feats)
    return (time.perf_counter() - t0) / repeats


def _options(options: BenchOptions) -> tuple[int, int, list[str]]:
    extra = options.extra
    try:
        pairs = int(extra.get("streams", 1 if options.quick else 20))
        workers = int(extra.get("workers", 0 if options.quick else 2))
    except ValueError as exc:
        raise InputError(f"bench trigger: bad option ({exc})") from exc
    if pairs < 1:
        raise InputError("bench trigger: streams must be >= 1")
    conds = [c.strip() for c in str(extra.get("conditions", ",".join(CONDITIONS))).split(",") if c.strip()]
    unknown = [c for c in conds if c not in CONDITIONS]
    if unknown or not conds:
        raise InputError(f"bench trigger: unknown conditions {unknown} (known: {', '.join(CONDITIONS)})")
    return pairs, workers, conds


@register("trigger")
def run(options: BenchOptions) -> BenchResult:
    pairs, workers, conds = _options(options)
    data_dir = data_root(options)
    cache = Path(options.extra["cache"]) if "cache" in options.extra else None
    max_utts = 3 if options.quick else 0
    t0 = time.perf_counter()
    voice = assistant_voice("eval", data_dir, quick=options.quick, cache=cache)
    streams = [(c, s) for c in conds for s in range(EVAL_SEED0, EVAL_SEED0 + pairs)]
    data = examples(data_dir, "eval", streams, cache, workers, max_utts, voice)
    extract_s = time.perf_counter() - t0
    model, rules = EpisodicTrigger(), RuleTrigger.calibrated()
    taggers = (("model", model.tag_features), ("baseline", rules.tag_features))
    preds = {name: [sessions(tag(e.feats)) for e in data] for name, tag in taggers}
    metrics: dict[str, Any] = {name: {"by_condition": {}} for name, _ in taggers}
    rows = []
    for cond in [*conds, "pooled"]:
        for noise, noisy in (("clean", False), ("noised", True)):
            idx = [i for i, e in enumerate(data) if e.noised == noisy and cond in ("pooled", e.condition)]
            part = [data[i] for i in idx]
            for name, _ in taggers:
                m = _evaluate([preds[name][i] for i in idx], part)
                if cond == "pooled":
                    metrics[name][noise] = m
                else:
                    metrics[name]["by_condition"].setdefault(cond, {})[noise] = m
                rows.append([name, cond, noise, len(part), *(m[k] for k in ROW_KEYS)])
            if cond == "pooled":
                rows.append(["paper", "", noise, "", PAPER[noise]["jaccard"], "", PAPER[noise]["f1_at_5"], "", "", ""])
    # Time to tag 8192 steps: features tiled from the evaluation streams to one full chunk.
    chunk = np.concatenate([e.feats for e in data])
    chunk = np.tile(chunk, (-(-CHUNK_STEPS // chunk.shape[0]), 1))[:CHUNK_STEPS]
    repeats = 1 if options.quick else 5
    metrics["seconds_per_8192_steps"] = _time_per_chunk(model.tag_features, chunk, repeats)
    metrics["baseline_seconds_per_8192_steps"] = _time_per_chunk(rules.tag_features, chunk, repeats)
    metrics["conditions"] = conds
    metrics["assistant_voice"] = voice.name
    metrics["streams"] = len(data)
    metrics["steps"] = int(sum(e.labels.size for e in data))
    metrics["true_sessions"] = int(sum(len(e.sessions) for e in data))
    notes = [
        f"{len(data)} held-out streams ({pairs} clean + {pairs} noised per condition, {len(conds)} conditions), "
        f"{metrics['steps']} steps, {metrics['true_sessions']} sessions; users: LibriSpeech test-other "
        f"(unseen in training); assistant: the template responder's lines in the {voice.name} TTS voice",
        f"assistant lines + features of the set: {extract_s:.1f} s "
        + (f"(read from the cache {cache}; missing ones extracted)" if cache else f"({workers} worker processes)"),
    ]
    if not options.quick:
        metrics["feature_seconds_per_8192_steps"] = _feature_time(data_dir, voice)
        notes.append("feature extraction (Silero VAD + resemblyzer, 1 process) timed on one 8192-step stream")
    header = ["tagger", "condition", "copy", "streams", "jaccard", "F1@0", "F1@5", "F1@10", "P@5", "R@5"]
    timing = [
        ["model: network + Viterbi", metrics["seconds_per_8192_steps"]],
        ["baseline rules", metrics["baseline_seconds_per_8192_steps"]],
        ["paper (GPU)", 0.08],
    ]
    if "feature_seconds_per_8192_steps" in metrics:
        timing.insert(2, ["feature extraction", metrics["feature_seconds_per_8192_steps"]])
    tables = [
        ("episodic trigger: session spans and boundaries", header, rows),
        ("seconds to tag 8192 steps (CPU)", ["stage", "seconds"], timing),
    ]
    return BenchResult("trigger", metrics, tables, notes)


def _feature_time(data_dir: Path, voice: AssistantVoice) -> float:
    """Extract features of a ≥ 8192-step stream made by concatenating held-out streams."""
    pools = load_pools(data_dir, "eval", voice=voice)
    listen: list[np.ndarray] = []
    speak: list[np.ndarray] = []
    seed = 10_000
    while sum(x.size for x in listen) < CHUNK_STEPS * 1280:
        _clean, noisy = make_pair(seed, pools)
        listen.append(noisy.listen)
        speak.append(noisy.speak)
        seed += 1
    la, sa = np.concatenate(listen)[: CHUNK_STEPS * 1280], np.concatenate(speak)[: CHUNK_STEPS * 1280]
    fx = FeatureExtractor.default()
    fx(la[:16000], sa[:16000])  # warm-up (librosa/numba)
    t0 = time.perf_counter()
    fx(la, sa)
    return time.perf_counter() - t0
