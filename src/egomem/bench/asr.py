"""`egomem bench asr`: word error rate and real-time factor of every ASR backend installed here,
side by side on the same utterances.

Data: a manifest.csv with `path` and `transcript` columns (default:
speech_librispeech_test_other_10spk, 100 utterances of LibriSpeech's hard half;
`--quick`: 10 of them, one per ten). Backends: every provider of the ASR registry whose
packages are installed; faster-whisper once per packaged Whisper model whose packages
are installed (base, tiny.en), plus `--set whisper_dir=DIR` for a local CTranslate2 model;
`--set backends=whisper-base,whisper-base+fallback` measures the named ones only (`+fallback`:
Whisper's temperature fallback on, off by default in the product).
Each backend's metrics sit under its own key (`whisper-base.wer`, `pocketsphinx.rtf`, ...);
`rtf` is wall time over audio time, `cpu_rtf` the process CPU time over audio time.
"""

from __future__ import annotations

import csv
import time
from pathlib import Path
from typing import Any

from egomem import weights
from egomem.bench import BenchOptions, BenchResult, data_root, register
from egomem.errors import ConfigError, InputError
from egomem.perception.asr import ASRBackend, word_errors
from egomem.perception.audio import SAMPLE_RATE, load_audio

EVAL_SET = "speech_librispeech_test_other_10spk"
QUICK_UTTERANCES = 10


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
    audio_s = decode_s = cpu_s = 0.0
    lat = []
    asr.transcribe(load_audio(items[0][0]))  # warm-up: the first call pays for lazy loading
    for path, ref in items:
        audio = load_audio(path)
        t0, c0 = time.perf_counter(), time.process_time()
        hyp = asr.transcribe(audio)
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        e, n = word_errors(ref, hyp)
        errors, words = errors + e, words + n
        audio_s += audio.size / SAMPLE_RATE
        decode_s += dt
        cpu_s += dc
        lat.append(dt * 1000)
    return {
        "utterances": len(items),
        "words": words,
        "wer": errors / words if words else 0.0,
        "rtf": decode_s / audio_s if audio_s else float("nan"),
        "cpu_rtf": cpu_s / audio_s if audio_s else float("nan"),
        "wall_s": decode_s,
        "cpu_s": cpu_s,
        "audio_s": audio_s,
        "latency_ms_p50": sorted(lat)[len(lat) // 2] if lat else float("nan"),
    }


def backends(options: BenchOptions) -> tuple[list[tuple[str, str, str, dict[str, Any]]], list[str]]:
    """(label, provider, model, settings) of every ASR backend that can run here, and notes on
    the ones that cannot."""
    from egomem.providers import ASR

    runnable, notes = [], []
    for info in ASR.available():
        if not info.installed:
            notes.append(f"{info.name}: not measured (missing packages: {', '.join(info.missing)})")
        elif info.name == "faster-whisper":
            for m in weights.MODELS.values():
                if m.kind != "whisper":
                    continue
                missing = weights.missing_packages(m)
                if missing:
                    notes.append(f"whisper-{m.name}: not measured (missing pip package {missing[0]})")
                else:
                    runnable.append((f"whisper-{m.name}", info.name, m.name, {"model": m.name}))
                    settings: dict[str, Any] = {"model": m.name, "temperature_fallback": True}
                    runnable.append((f"whisper-{m.name}+fallback", info.name, m.name, settings))
            wdir = options.extra.get("whisper_dir", "")
            if wdir:
                runnable.append((f"whisper-{Path(wdir).name}", info.name, wdir, {"model": wdir}))
        else:
            runnable.append((info.name, info.name, info.name, {}))
    # `--set backends=a,b` measures those labels only; by default every backend with its default
    # settings (the `+fallback` variants, Whisper's sampling fallback on, only when named).
    wanted = [b.strip() for b in str(options.extra.get("backends", "")).split(",") if b.strip()]
    if wanted:
        unknown = sorted(set(wanted) - {label for label, *_ in runnable})
        if unknown:
            raise InputError(f"no ASR backend {', '.join(unknown)} here; choose from {[r[0] for r in runnable]}")
        return [r for r in runnable if r[0] in wanted], notes
    return [r for r in runnable if not r[0].endswith("+fallback")], notes


@register("asr")
def run(options: BenchOptions) -> BenchResult:
    from egomem.config import default_data_dir
    from egomem.providers import ASR, BuildContext, create

    data = data_root(options)
    root = data / EVAL_SET if (data / EVAL_SET).is_dir() else data
    items = load_transcribed(root)
    if options.quick:  # one utterance in ten, so that every speaker is in the subset
        items = items[:: max(1, len(items) // QUICK_UTTERANCES)][:QUICK_UTTERANCES]
    ctx = BuildContext(data_dir=default_data_dir())
    runnable, notes = backends(options)
    metrics: dict[str, Any] = {"dataset": root.name, "utterances": len(items)}
    rows = []
    for label, provider, model, settings in runnable:
        options.report(f"asr: {label} on {len(items)} utterance(s)")
        try:
            asr = create("asr", ASR.parse_config(provider, settings), ctx)
        except ConfigError as exc:
            notes.append(f"{label}: not measured ({exc})")
            continue
        m = evaluate(asr, items)
        metrics[label] = {"provider": provider, "model": model, **m}
        rows.append([label, m["utterances"], m["words"], m["wer"], m["rtf"], m["cpu_rtf"], m["latency_ms_p50"]])
    table = (f"ASR on {root.name}", ["backend", "utterances", "words", "wer", "rtf", "cpu_rtf", "ms_p50"], rows)
    return BenchResult("asr", metrics, [table], notes)
