"""`egomem bench diarization`: diarization error rate of the product's diarizer and two baselines.

Systems, all run by `egomem.perception.diarization.Diarizer` (one loaded voice encoder):
- `ours`: the product's default configuration (chosen on the 10 `trn` files only);
- `single_speaker`: one speaker over the VAD's speech (`SINGLE_SPEAKER`);
- `threshold_clustering`: silero + resemblyzer 2 s windows hop 0.5 s + average-linkage
  clustering at cosine distance 0.40 (`THRESHOLD_CLUSTERING`).

Scoring: pyannote.metrics' DiarizationErrorRate, overlap scored (`skip_overlap=False`), with no
collar and with ±0.25 s (`collar=0.5`: pyannote's collar is the total width), per file and
pooled; within each file's UEM when there is one. Speaker count: files whose number of output
speakers equals the reference's. RTF: wall seconds of diarization (VAD included, model loading
not) over audio seconds; `cpu_rtf` the process CPU seconds over audio seconds.

Data (`--data DIR`): the pyannote debug layout (`debug.{train,development,test}.{rttm,uem}` with
the wavs, in DIR or DIR/debug_meetings), or any folder of NAME.wav + NAME.rttm (+ NAME.uem), or
NAME.wav + NAME.segments (pyAudioAnalysis: `start end label` per line). Without `--data`: the
pyannote debug meetings (top-level keys; `trn` and `heldout` = dev + tst apart), plus the
pyannote `sample` and `pyaudioanalysis_diarization` under their own keys. `--quick`: 2 files per
split of the meetings only.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from egomem.bench import BenchOptions, BenchResult, data_root, register
from egomem.errors import InputError
from egomem.media import SAMPLE_RATE, load_audio
from egomem.perception.diarization import (
    SINGLE_SPEAKER,
    THRESHOLD_CLUSTERING,
    Diarization,
    DiarizationConfig,
    Diarizer,
    OnlineDiarizer,
)

PYANNOTE = "speech_pyannote_diarization"
PYAUDIOANALYSIS = "pyaudioanalysis_diarization"
SPLITS = {"train": "trn", "development": "heldout", "test": "heldout"}
SYSTEMS: dict[str, DiarizationConfig] = {
    "ours": DiarizationConfig(),
    "single_speaker": SINGLE_SPEAKER,
    "threshold_clustering": THRESHOLD_CLUSTERING,
    # Not baselines: the online mode (0.5 s chunks), and two ablations of ours: one speaker over its
    # VAD's speech (what clustering adds over the tuned VAD), and no overlap heuristic.
    "ours_online": DiarizationConfig(),
    "ours_vad_single_speaker": replace(DiarizationConfig(), method="single", overlap_s=0.0),
    "ours_no_overlap": replace(DiarizationConfig(), overlap_s=0.0),
}
ONLINE_CHUNK_S = 0.5
COLLARS = {"der": 0.0, "der_collar_0_25": 0.5}


@dataclass
class Item:
    uri: str
    wav: Path
    turns: list[tuple[float, float, str]]  # reference (start, end, speaker)
    uem: list[tuple[float, float]] | None
    split: str = ""


def read_rttm(path: Path) -> dict[str, list[tuple[float, float, str]]]:
    out: dict[str, list[tuple[float, float, str]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        p = line.split()
        if len(p) < 8 or p[0] != "SPEAKER":
            continue
        start, dur = float(p[3]), float(p[4])
        out.setdefault(p[1], []).append((start, start + dur, p[7]))
    return out


def read_uem(path: Path) -> dict[str, list[tuple[float, float]]]:
    out: dict[str, list[tuple[float, float]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        p = line.split()
        if len(p) >= 4:
            out.setdefault(p[0], []).append((float(p[2]), float(p[3])))
    return out


def read_segments(path: Path) -> list[tuple[float, float, str]]:
    """pyAudioAnalysis ground truth: `start<TAB>end<TAB>label` per line."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        p = line.replace(",", " ").split()
        if len(p) >= 3:
            out.append((float(p[0]), float(p[1]), p[2]))
    return out


def load_items(root: Path) -> list[Item]:
    """The items of a pyannote debug layout or of a folder of NAME.wav + NAME.rttm/.segments."""
    if (root / "debug_meetings").is_dir():
        root = root / "debug_meetings"
    items: list[Item] = []
    split_rttms = sorted(root.glob("debug.*.rttm"))
    if split_rttms:
        for rttm in split_rttms:
            split = SPLITS.get(rttm.name.split(".")[1], rttm.name.split(".")[1])
            uem_path = rttm.with_suffix(".uem")
            uems = read_uem(uem_path) if uem_path.is_file() else {}
            for uri, turns in sorted(read_rttm(rttm).items()):
                items.append(Item(uri, root / f"{uri}.wav", turns, uems.get(uri), split))
    else:
        for wav in sorted(root.glob("*.wav")):
            rttm, seg, uem = wav.with_suffix(".rttm"), wav.with_suffix(".segments"), wav.with_suffix(".uem")
            if rttm.is_file():
                turns = [t for ts in read_rttm(rttm).values() for t in ts]
            elif seg.is_file():
                turns = read_segments(seg)
            else:
                continue
            spans = read_uem(uem).get(wav.stem) if uem.is_file() else None
            items.append(Item(wav.stem, wav, turns, spans))
    missing = [i.wav.name for i in items if not i.wav.is_file()]
    if missing:
        raise InputError(f"{root}: reference without audio: {', '.join(missing[:5])}")
    if not items:
        raise InputError(f"{root}: no diarization references (debug.*.rttm, NAME.rttm or NAME.segments with NAME.wav)")
    return items


def _annotation(turns: list[tuple[float, float, str]], uri: str) -> Any:
    from pyannote.core import Annotation
    from pyannote.core import Segment as PSegment

    ann = Annotation(uri=uri)
    for i, (s, e, spk) in enumerate(turns):
        if e > s:
            ann[PSegment(s, e), i] = spk
    return ann


def _uem(item: Item, duration: float) -> Any:
    from pyannote.core import Segment as PSegment
    from pyannote.core import Timeline

    spans = item.uem or [(0.0, duration)]
    return Timeline([PSegment(s, e) for s, e in spans], uri=item.uri)


def reference_speakers(item: Item, duration: float) -> int:
    spans = item.uem or [(0.0, duration)]
    return len({spk for s, e, spk in item.turns if any(min(e, b) > max(s, a) for a, b in spans)})


def overlap_floor(items: list[Item], durations: dict[str, float]) -> float:
    """DER of a perfect system that outputs one speaker per frame: the overlapped speech beyond
    the first speaker over all reference speech (10 ms frames, within the UEM)."""
    extra = total = 0.0
    for it in items:
        n = int(np.ceil(durations[it.uri] * 100))
        count = np.zeros(n)
        for s, e, _ in it.turns:
            count[round(s * 100) : round(e * 100)] += 1
        mask = np.zeros(n, dtype=bool)
        for a, b in it.uem or [(0.0, durations[it.uri])]:
            mask[round(a * 100) : round(b * 100)] = True
        extra += float(np.maximum(count[mask] - 1, 0).sum())
        total += float(count[mask].sum())
    return extra / total if total else float("nan")


def score(items: list[Item], hyps: dict[str, Diarization], durations: dict[str, float]) -> dict[str, Any]:
    """Pooled and per-file DER (both collars) and speaker-count accuracy of one system."""
    from pyannote.metrics.diarization import DiarizationErrorRate

    out: dict[str, Any] = {}
    per_file: dict[str, dict[str, Any]] = {it.uri: {} for it in items}
    for key, collar in COLLARS.items():
        metric = DiarizationErrorRate(collar=collar, skip_overlap=False)
        for it in items:
            hyp = _annotation([(t.start, t.end, f"spk{t.speaker}") for t in hyps[it.uri].turns], it.uri)
            per_file[it.uri][key] = float(metric(_annotation(it.turns, it.uri), hyp, uem=_uem(it, durations[it.uri])))
        out[key] = float(abs(metric))
    exact = 0
    for it in items:
        ref_n, hyp_n = reference_speakers(it, durations[it.uri]), hyps[it.uri].speakers
        per_file[it.uri].update(speakers_ref=ref_n, speakers_hyp=hyp_n)
        exact += int(ref_n == hyp_n)
    out["count_exact"] = exact / len(items) if items else float("nan")
    out["count_exact_files"] = exact
    out["files"] = len(items)
    out["per_file"] = per_file
    return out


def online(diarizer: Diarizer, audio: np.ndarray) -> Diarization:
    o = OnlineDiarizer(diarizer)
    step = round(ONLINE_CHUNK_S * SAMPLE_RATE)
    for i in range(0, audio.size, step):
        o.feed(audio[i : i + step])
    return o.result()


def run_system(
    diarizer: Diarizer, items: list[Item], audio: dict[str, np.ndarray], is_online: bool = False
) -> tuple[dict[str, Diarization], dict[str, float]]:
    hyps: dict[str, Diarization] = {}
    wall = cpu = 0.0
    for it in items:
        t0, c0 = time.perf_counter(), time.process_time()
        hyps[it.uri] = online(diarizer, audio[it.uri]) if is_online else diarizer.diarize(audio[it.uri])
        wall += time.perf_counter() - t0
        cpu += time.process_time() - c0
    audio_s = sum(a.size for a in audio.values() if a is not None) / SAMPLE_RATE
    return hyps, {
        "rtf": wall / audio_s if audio_s else float("nan"),
        "cpu_rtf": cpu / audio_s if audio_s else float("nan"),
    }


def evaluate_dataset(base: Diarizer, items: list[Item]) -> dict[str, Any]:
    """Every system on every item; pooled over all, and over `trn` and `heldout` where the items
    carry those splits."""
    audio = {it.uri: load_audio(it.wav) for it in items}
    durations = {it.uri: audio[it.uri].size / SAMPLE_RATE for it in items}
    base.diarize(audio[items[0].uri])  # warm-up: model loading is not diarization time
    out: dict[str, Any] = {"files": len(items), "floor_one_speaker": overlap_floor(items, durations)}
    for name, cfg in SYSTEMS.items():
        hyps, speed = run_system(base.with_config(cfg), items, audio, is_online=name == "ours_online")
        m = {**score(items, hyps, durations), **speed}
        for split in sorted({it.split for it in items if it.split}):
            sub = [it for it in items if it.split == split]
            m[split] = {k: v for k, v in score(sub, hyps, durations).items() if k != "per_file"}
        if name == "ours":
            m["config"] = asdict(cfg)
        if name == "ours_online":
            m["delay_s"] = OnlineDiarizer(base.with_config(cfg)).delay_s
        out[name] = m
    return out


def _rows(label: str, res: dict[str, Any]) -> list[list[Any]]:
    rows = []
    for name in SYSTEMS:
        m = res[name]
        rows.append([label, name, m["files"], m["der"], m["der_collar_0_25"], m["count_exact"], m["rtf"], m["cpu_rtf"]])
        for split in ("trn", "heldout"):
            if split in m:
                s = m[split]
                rows.append(
                    [f"{label}/{split}", name, s["files"], s["der"], s["der_collar_0_25"], s["count_exact"], "", ""]
                )
    return rows


@register("diarization")
def run(options: BenchOptions) -> BenchResult:
    root = data_root(options)
    if options.data is not None and not (root / PYANNOTE).is_dir():
        datasets = [("data", load_items(root))]
    else:
        meetings = load_items(root / PYANNOTE / "debug_meetings")
        if options.quick:
            meetings = [it for s in ("trn", "heldout") for it in [i for i in meetings if i.split == s][:2]]
        datasets = [("meetings", meetings)]
        if not options.quick:
            datasets += [
                ("sample", load_items(root / PYANNOTE / "sample")),
                ("pyaudioanalysis", load_items(root / PYAUDIOANALYSIS)),
            ]
    base = Diarizer()
    metrics: dict[str, Any] = {}
    rows: list[list[Any]] = []
    for label, items in datasets:
        res = evaluate_dataset(base, items)
        if label in ("data", "meetings"):
            metrics.update(res)
            metrics["dataset"] = str(root) if label == "data" else f"{PYANNOTE}/debug_meetings"
        else:
            metrics[label] = res
        rows += _rows(label, res)
    header = ["dataset", "system", "files", "der", "der_±0.25", "count_exact", "rtf", "cpu_rtf"]
    per_file = [
        [
            uri,
            *(metrics[s]["per_file"][uri]["der"] for s in SYSTEMS),
            metrics["ours"]["per_file"][uri]["der_collar_0_25"],
            metrics["ours"]["per_file"][uri]["speakers_ref"],
            metrics["ours"]["per_file"][uri]["speakers_hyp"],
        ]
        for uri in metrics["ours"]["per_file"]
    ]
    tables = [
        ("Diarization error rate (pooled; overlap scored)", header, rows),
        ("Per file (first dataset)", ["file", *SYSTEMS, "ours_±0.25", "ref_n", "hyp_n"], per_file),
    ]
    notes = [
        f"floor for one speaker per frame (overlap): {metrics['floor_one_speaker']:.3f}",
        "ours is chosen on the trn files only; heldout = dev + tst",
    ]
    return BenchResult("diarization", metrics, tables, notes)
