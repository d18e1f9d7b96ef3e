"""`egomem bench realtime`: a long multi-user stream through all three processes.

The stream is built from real data: LibriSpeech test-other speakers (10 people, their
own utterances) each paired with one LFW identity's photos (a different photo per
visit), with gaps between turns and absences between visits; people come back later.
It is replayed as fast as possible (lockstep with the identity polls, so results do
not depend on machine speed) and we report:

- the real-time factor of each process (its busy seconds / stream seconds) and overall
  (wall seconds / stream seconds);
- who was identified: each visit is mapped to the Level-1 user holding most of it, and
  each person to the user holding most of their visits; purity, fragmentation and wrong
  switches follow (bench/_visits.py), with placeholders excluded;
- the correct-user Level-1 latency: from a visitor's first frame on camera to the
  Level-1 MemChunk of their own user;
- peak resident memory.

`--set seeds=0,1,2` runs one stream per seed (fresh store each) and reports each seed,
the pooled figures and the spread.
"""

from __future__ import annotations

import csv
import resource
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from egomem.bench import BenchOptions, BenchResult, data_root, register
from egomem.bench._visits import Visit, pool, score_visits
from egomem.config import Config, load_config
from egomem.errors import InputError
from egomem.perception.audio import SAMPLE_RATE, load_audio
from egomem.runtime.build import Models, build_agent
from egomem.runtime.timeline import Timeline
from egomem.store.sqlite import SQLiteStore
from egomem.stream.buffer import Frame
from egomem.stream.sources import Recording, replay

W, H, FPS = 640, 480, 2.0
TURN_GAP_S, ABSENT_S = 1.5, 5.0


def _canvas(photo: Path | None) -> np.ndarray:
    img = Image.new("RGB", (W, H), (90, 90, 90))
    if photo is not None:
        face = Image.open(photo).convert("RGB")
        img.paste(face, ((W - face.width) // 2, (H - face.height) // 2))
    return np.asarray(img)


def build_stream(data: Path, minutes: float, seed: int = 0) -> tuple[Recording, list[tuple[float, str]]]:
    """The stream and its visits: (time the visitor's face first appears, speaker id)."""
    speech = data / "speech_librispeech_test_other_10spk"
    faces = data / "faces_lfw_subset_10x10" / "images"
    if not (speech / "manifest.csv").is_file() or not faces.is_dir():
        raise InputError(
            f"bench realtime needs speech_librispeech_test_other_10spk and faces_lfw_subset_10x10 in {data}"
        )
    utts: dict[str, list[Path]] = defaultdict(list)
    with open(speech / "manifest.csv", newline="") as f:
        for row in csv.DictReader(f):
            utts[row["speaker_id"]].append(speech / row["path"])
    speakers = sorted(utts)
    people = sorted(p for p in faces.iterdir() if p.is_dir())
    photo_of = {spk: sorted(people[i % len(people)].glob("*.jpg")) for i, spk in enumerate(speakers)}
    rng = np.random.default_rng(seed)
    audio: list[np.ndarray] = []
    frames: list[Frame] = []
    visits: list[tuple[float, str]] = []
    next_utt: dict[str, int] = defaultdict(int)
    t, visit = 0.0, 0
    blank = _canvas(None)
    while t < minutes * 60:
        spk = speakers[rng.integers(len(speakers))]
        photo = photo_of[spk][visit % len(photo_of[spk])]
        face = _canvas(photo)
        visits.append((t, spk))
        start = t
        for _ in range(int(rng.integers(2, 4))):
            k = next_utt[spk] % len(utts[spk])
            next_utt[spk] += 1
            x = load_audio(utts[spk][k])[: int(12 * SAMPLE_RATE)]  # turns of at most 12 s
            audio += [
                np.zeros(int(0.5 * SAMPLE_RATE), np.float32),
                x,
                np.zeros(int(TURN_GAP_S * SAMPLE_RATE), np.float32),
            ]
            t += 0.5 + x.size / SAMPLE_RATE + TURN_GAP_S
        frames += [Frame(ft, face) for ft in np.arange(start, t, 1 / FPS)]
        audio.append(np.zeros(int(ABSENT_S * SAMPLE_RATE), np.float32))
        frames += [Frame(ft, blank) for ft in np.arange(t, t + ABSENT_S, 1 / FPS)]
        t += ABSENT_S
        visit += 1
    listen = np.concatenate(audio)
    return Recording(listen, np.zeros(0, np.float32), frames, listen.size / SAMPLE_RATE), visits


def run_seed(data: Path, minutes: float, seed: int, models: Models, cfg: Config, root: Path) -> dict[str, Any]:
    """One stream (its own seed and fresh store) through the agent, scored visit by visit."""
    rec, starts = build_stream(data, minutes, seed)
    ends = [t for t, _ in starts[1:]] + [rec.duration_s]
    visits = [Visit(t, end - ABSENT_S, spk) for (t, spk), end in zip(starts, ends, strict=True)]
    store = SQLiteStore(root / f"memory-seed{seed}.db")
    try:
        timeline = Timeline()
        agent = build_agent(cfg, store, models, timeline)
        result = agent.run(replay(rec), lockstep=True)
        switches = [(e.time, e.fields.get("user")) for e in timeline.of_type("memchunk") if e.fields["level"] == 1]
        users = store.list_users(include_placeholders=False)
        placeholders = {u.id for u in store.list_users()} - {u.id for u in users}
    finally:
        store.close()
    dur = result.duration_s
    out = score_visits(visits, switches, placeholders)
    out["identity"]["users"] = len(users)
    out["identity"]["placeholders"] = len(placeholders)
    out.update(
        stream_s=round(dur, 1),
        visits=len(visits),
        sessions_found=len(result.sessions),
        rtf_overall=result.wall_s / dur,
        rtf_by_process={
            "ingest": result.times.ingest / dur,
            "dialog": result.times.dialog / dur,
            "retrieval": result.times.retrieval / dur,
            "memory": result.times.memory / dur,
        },
    )
    return out


@register("realtime")
def run(options: BenchOptions) -> BenchResult:
    data = data_root(options)
    minutes = float(options.extra.get("minutes", 1.0 if options.quick else 10.0))
    try:
        seeds = [int(s) for s in options.extra.get("seeds", "0").split(",") if s.strip()]
    except ValueError as exc:
        raise InputError(f"--set seeds= expects integers separated by commas: {exc}") from exc
    if not seeds:
        raise InputError("--set seeds= names no seed")
    with tempfile.TemporaryDirectory() as tmp:
        cfg = load_config(data_dir=tmp, environ={})
        models = Models(cfg)
        t_load = time.perf_counter()
        for m in (models.vad, models.text, models.face, models.voice, models.transcriber, models.trigger):
            assert m is not None  # load every model before the clock starts
        load_s = time.perf_counter() - t_load
        per_seed = {str(s): run_seed(data, minutes, s, models, cfg, Path(tmp)) for s in seeds}
    pooled, spread = pool(per_seed)
    for r in per_seed.values():
        del r["latencies"]
    metrics: dict[str, Any] = {
        "minutes": minutes,
        "seeds": per_seed,
        "pooled": pooled,
        "spread": spread,
        "rtf_overall": pooled["rtf_overall"],
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "model_load_s": load_s,
    }
    keys = ["identity.purity", "identity.fragmentation", "identity.wrong_switches", "identity.users"]
    keys += ["level1_correct_latency_s_p50", "level1_correct_latency_s_p95", "level1_missed_visits"]
    keys += ["visits", "sessions_found", "rtf_overall"]
    runs = {**{f"seed {s}": r for s, r in per_seed.items()}, "pooled": pooled}
    rows = [[k, *(_get(r, k) for r in runs.values())] for k in keys]
    notes = [
        "every visit is mapped to the Level-1 user holding most of it; each person to the user holding most "
        "of their visits; placeholders are not users",
        "correct-user latency: first frame of a visit -> Level-1 MemChunk of the visitor's own user (poll 2 s)",
        "rtf_overall = wall / stream seconds with the three processes running concurrently (lockstep polls)",
    ]
    title = f"realtime, {minutes:g} min stream per seed, seeds {','.join(map(str, seeds))}"
    return BenchResult("realtime", metrics, [(title, ["metric", *runs], rows)], notes)


def _get(d: dict[str, Any], dotted: str) -> Any:
    for part in dotted.split("."):
        d = d.get(part) if isinstance(d, dict) else None  # type: ignore[assignment]
    return "—" if d is None else d
