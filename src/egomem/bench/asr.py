"""`egomem bench asr`: word error rate and real-time factor of each ASR backend that can run here.

Data: a manifest.csv with `path` and `transcript` columns (default:
speech_librispeech_test_other_10spk, 100 utterances, lower-case LibriSpeech references).
Backends: pocketsphinx always; faster-whisper when `--set whisper_dir=DIR` names a local
CTranslate2 model directory (never downloaded).
"""

from __future__ import annotations

import csv
import time
from pathlib import Path
from typing import Any

from egomem.bench import BenchOptions, BenchResult, register
from egomem.bench.face import default_data
from egomem.errors import InputError
from egomem.perception.asr import ASRBackend, make_asr, word_errors
from egomem.perception.audio import SAMPLE_RATE, load_audio

EVAL_SET = "speech_librispeech_test_other_10spk"


def load_transcribed(root: Path) -> list[tuple[Path, str]]:
    m = root / "manifest.csv"
    if not m.is_file():
        raise InputError(f"{root} has no manifest.csv with path and transcript columns")
    with open(m, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows or "path" not in rows[0] or "transcript" not in rows[0]:
        raise InputError(f"{m} needs path and transcript columns")
    return [(root / r["path"], r["transcript"]) for r in rows if r["transcript"].strip()]


def evaluate(asr: ASRBackend, items: list[tuple[Path, str]]) -> dict[str, Any]:
    errors = words = 0
    audio_s = decode_s = 0.0
    lat = []
    for path, ref in items:
        audio = load_audio(path)
        t0 = time.perf_counter()
        hyp = asr.transcribe(audio)
        dt = time.perf_counter() - t0
        e, n = word_errors(ref, hyp)
        errors, words = errors + e, words + n
        audio_s += audio.size / SAMPLE_RATE
        decode_s += dt
        lat.append(dt * 1000)
    return {
        "utterances": len(items),
        "words": words,
        "wer": errors / words if words else 0.0,
        "rtf": decode_s / audio_s if audio_s else float("nan"),
        "audio_s": audio_s,
        "latency_ms_p50": sorted(lat)[len(lat) // 2] if lat else float("nan"),
    }


@register("asr")
def run(options: BenchOptions) -> BenchResult:
    data = options.data or default_data()
    root = data / EVAL_SET if (data / EVAL_SET).is_dir() else data
    items = load_transcribed(root)
    if options.quick:
        items = items[:3]
    backends: list[tuple[str, ASRBackend | str]] = [("pocketsphinx", make_asr("pocketsphinx"))]
    wdir = options.extra.get("whisper_dir", "")
    try:
        backends.append(("faster-whisper", make_asr("faster-whisper", wdir)))
    except InputError as exc:
        backends.append(("faster-whisper", f"not measured: {exc}"))
    metrics: dict[str, Any] = {}
    rows, notes = [], []
    for name, asr in backends:
        if isinstance(asr, str):
            notes.append(f"{name}: {asr}")
            continue
        m = evaluate(asr, items)
        if name == "pocketsphinx":  # the default backend's figures sit flat under the dataset key
            metrics.update(m)
        else:
            metrics[name.replace("-", "_")] = m
        rows.append([name, m["utterances"], m["words"], m["wer"], m["rtf"], m["latency_ms_p50"]])
    result = {root.name: metrics}
    table = (f"ASR on {root.name}", ["backend", "utterances", "words", "wer", "rtf", "ms_p50"], rows)
    return BenchResult("asr", result, [table], notes)
