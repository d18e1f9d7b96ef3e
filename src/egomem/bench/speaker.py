"""`egomem bench speaker`: speaker identification (pass@1, EER) on long utterances, in noise, and on
short segments, each under both s-norm cohorts.

Long utterances: on the evaluation set (default speech_librispeech_test_other_10spk) the first
`enroll` utterances of each speaker (manifest order) are enrolled as keys, every other utterance
is a query; the speakers of the distractor set (default speech_librispeech_train_clean_100_1utt,
one utterance each) are enrolled too. White noise at each SNR of `snrs` (default 10 dB) is added
to the queries only, in `draws` independent draws (seeds 0..draws-1); the JSON gives the mean,
min and max over the draws and every draw.

Short segments (bench/_speaker_short.py): the same sets cut into 0.3-1.5 s speech pieces, 3 short
enrolment pieces per speaker, dev/test split by utterance; and FSDD's 8 kHz digits.

Every clip goes through the live pipeline (VoiceEncoder: Silero VAD, gating, resemblyzer) and
scoring through PersonIdentifier (bench/_speaker_eval.py), under the fixed shipped cohort (the
paper's protocol) and the gallery cohort (the runtime once >= 20 users are enrolled). EER trials:
every query against every enrolled user. Nothing here is tuned on the reported queries: the
thresholds come from config (the short-speech one from the dev split, docs/benchmarks/speaker.md).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from egomem.bench import BenchOptions, BenchResult, data_root, register
from egomem.bench._speaker_eval import COHORTS, Query, gallery, score, spread
from egomem.config import Config, load_config
from egomem.identity.identifier import PersonIdentifier
from egomem.identity.types import VoiceObservation
from egomem.perception.audio import add_noise, load_audio
from egomem.perception.voice import VoiceEncoder
from egomem_eval.identity.labelled import AUDIO_EXT, load_set

EVAL_SET = "speech_librispeech_test_other_10spk"
DISTRACTORS = "speech_librispeech_train_clean_100_1utt"
FSDD_SET = "speech_fsdd_subset"
SNRS = (10.0,)
DRAWS = 3


def retrieval_latency(ident: PersonIdentifier, n_keys: int, repeats: int) -> float:
    """ms (p50) of one s-normed retrieval against at least `n_keys` enrolled voice keys (synthetic extra users)."""
    rng = np.random.default_rng(0)
    extra = max(0, n_keys - len(ident.voice_index))
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


def _row(name: str, split: str, m: dict[str, Any], suffix: str = "") -> list[Any]:
    cells: list[Any] = [name, split, m["queries"], m["no_speech"]]
    for c in ("raw", *COHORTS):
        cells += [m[c][f"pass_at_1{suffix}"], m[c][f"eer{suffix}"]]
    return [*cells, m["gallery_cohort"][f"accuracy_at_threshold{suffix}"]]


HEADER = ["condition", "split", "queries", "no_speech", "raw p@1", "raw EER"]
HEADER += ["fixed p@1", "fixed EER", "gallery p@1", "gallery EER", "gallery acc@thr"]


def long_utterances(
    cfg: Config,
    enc: VoiceEncoder,
    by_spk: dict[str, list[Path]],
    distract: list[tuple[Path, str]],
    opts: dict[str, Any],
) -> tuple[dict[str, Any], list[list[Any]]]:
    n_enroll, snrs, draws = opts["enroll"], opts["snrs"], opts["draws"]
    enroll: dict[str, list[VoiceObservation]] = {}
    queries_audio: list[tuple[str, np.ndarray]] = []
    for spk, paths in by_spk.items():
        enroll[spk] = [o for o in (enc.observe(load_audio(p)) for p in paths[:n_enroll]) if o is not None]
        queries_audio += [(spk, load_audio(p)) for p in paths[n_enroll:]]
    for p, spk in distract:
        enroll[f"distractor {spk}"] = [o for o in [enc.observe(load_audio(p))] if o is not None]
    metrics: dict[str, Any] = {}
    rows: list[list[Any]] = []
    t_embed, audio_s = 0.0, 0.0
    with gallery(cfg, enc, enroll) as g:

        def embed(snr: float | None, rng: np.random.Generator | None) -> list[Query]:
            nonlocal t_embed, audio_s
            out = []
            for spk, a in queries_audio:
                x = a if snr is None or rng is None else add_noise(a, snr, rng)
                t0 = time.perf_counter()
                out.append(Query(g.users[spk], enc.observe(x)))
                t_embed += time.perf_counter() - t0
                audio_s += a.size / 16000
            return out

        metrics["clean"] = score(g, embed(None, None))
        rows.append(_row("clean", "all", metrics["clean"]))
        for snr in snrs:
            per_draw = [score(g, embed(snr, np.random.default_rng(seed))) for seed in range(draws)]
            key = f"snr{snr:g}"
            metrics[key] = {"snr_db": snr, "seeds": list(range(draws)), **spread(per_draw), "draws": per_draw}
            for stat in ("mean", "min", "max"):
                rows.append(_row(f"white noise {snr:g} dB ({stat} of {draws})", "all", metrics[key], f"_{stat}"))
        metrics["enrolled_users"] = g.enrolled_users
        metrics["embed_rtf"] = t_embed / audio_s if audio_s else float("nan")
        latency_ident = g.idents["gallery_cohort"]
        metrics["retrieval_ms_p50_1000_keys"] = retrieval_latency(
            latency_ident, 200 if opts["quick"] else 1_000, 5 if opts["quick"] else 20
        )
    return metrics, rows


def _short_rows(name: str, block: dict[str, Any]) -> list[list[Any]]:
    rows = []
    for split in ("test", "dev"):
        for key, m in block.get(split, {}).items():
            rows.append(_row(f"{name} {key.replace('_', '.', 1).replace('_', '-', 1).replace('_', '.')} s", split, m))
    return rows


@register("speaker")
def run(options: BenchOptions) -> BenchResult:
    from egomem.bench._speaker_short import fsdd, librispeech_short

    cfg: Config = load_config()
    data = data_root(options)
    ex = options.extra
    eval_root = data / ex.get("eval", EVAL_SET)
    if not eval_root.is_dir():  # --data points at the evaluation set itself
        eval_root = data
    distract_root = data / ex.get("distractors", DISTRACTORS)
    fsdd_root = data / ex.get("fsdd", FSDD_SET)
    opts: dict[str, Any] = {
        "enroll": int(ex.get("enroll", "3")),
        "snrs": [float(x) for x in ex["snrs"].split(",")] if "snrs" in ex else list(SNRS),
        "draws": int(ex.get("draws", str(DRAWS))),
        "quick": options.quick,
    }
    parts = set(ex.get("parts", "long,short,fsdd").split(","))
    splits = tuple(ex.get("splits", "dev,test").split(","))  # short and FSDD: "dev" alone while choosing
    ev = load_set(eval_root, AUDIO_EXT)
    by_spk: dict[str, list[Path]] = {}
    for p, spk in ev.items:
        by_spk.setdefault(spk, []).append(p)
    distract = load_set(distract_root, AUDIO_EXT).items if distract_root.is_dir() else []
    if options.quick:
        by_spk = {s: ps[: opts["enroll"] + 2] for s, ps in list(by_spk.items())[:3]}
        distract = distract[:4]
        opts["draws"] = min(opts["draws"], 2)
    enc = VoiceEncoder(cfg.voice)
    metrics: dict[str, Any] = {"eval_set": eval_root.name, "distractor_set": distract_root.name}
    tables: list[tuple[str, list[str], list[list[Any]]]] = []
    if "long" in parts:
        long_m, rows = long_utterances(cfg, enc, by_spk, distract, opts)
        metrics.update(long_m)
        tables.append(
            (
                f"long utterances, {eval_root.name} ({opts['enroll']} enrolled utterances per speaker, "
                f"{long_m['enrolled_users']} enrolled users incl. distractors)",
                HEADER,
                rows,
            )
        )
        tables.append(
            (
                "latency",
                ["what", "value"],
                [
                    ["embed real-time factor (VAD+gating+resemblyzer)", long_m["embed_rtf"]],
                    [
                        "one s-normed retrieval, 1,000+ keys (200 with --quick), ms p50",
                        long_m["retrieval_ms_p50_1000_keys"],
                    ],
                ],
            )
        )
    if "short" in parts:
        items = [(p, spk) for spk, ps in by_spk.items() for p in ps]
        short = librispeech_short(cfg, enc, items, distract, splits_wanted=splits)
        metrics["short"] = short.get("test", {})
        metrics["short_dev"] = short.get("dev", {})
        metrics["short_enrolled_users"] = short["enrolled_users"]
        tables.append(
            ("short segments (LibriSpeech pieces, 3 short enrolment pieces)", HEADER, _short_rows("pieces", short))
        )
    if "fsdd" in parts and fsdd_root.is_dir():
        fs = fsdd(cfg, enc, fsdd_root, distract, splits_wanted=splits)
        metrics["fsdd"] = fs.get("test", {})
        metrics["fsdd_dev"] = fs.get("dev", {})
        metrics["fsdd_enrolled_users"] = fs["enrolled_users"]
        rows = [_row("fsdd digits", sp, fs[sp]) for sp in ("test", "dev") if sp in fs]
        tables.append(("FSDD 8 kHz digits (3 enrolment digits per speaker)", HEADER, rows))
    v = cfg.voice
    notes = [
        f"thresholds from config: {v.threshold} (s-norm), short speech (< {v.short_speech_s} s): {v.short_threshold}",
        f"min_speech_s {v.min_speech_s}; fixed = shipped cohort only; gallery = runtime (other users' keys join "
        f"from {v.min_enrolled_cohort} users)",
        "white noise added to queries only; enrollment is clean",
    ]
    return BenchResult("speaker", metrics, tables, notes)
