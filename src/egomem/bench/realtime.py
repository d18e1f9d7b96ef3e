"""`egomem bench realtime`: a long multi-user stream through all three processes.

The stream is built from real data: LibriSpeech test-other speakers (10 people, their
own utterances) each paired with one LFW identity's photos (a different photo per
visit), with gaps between turns and absences between visits; people come back later.
It is replayed as fast as possible (lockstep with the identity polls, so results do
not depend on machine speed) and we report:

- the real-time factor of each process (its busy seconds / stream seconds) and overall
  (wall seconds / stream seconds);
- the Level-1 latency: from a visitor's first frame on camera to the Level-1 MemChunk
  event that switches to them (new visitors: to their provisional user);
- peak resident memory.
"""

from __future__ import annotations

import csv
import os
import resource
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from PIL import Image

from egomem.bench import BenchOptions, BenchResult, register
from egomem.config import load_config
from egomem.errors import InputError
from egomem.perception.audio import SAMPLE_RATE, load_audio
from egomem.runtime.build import Models, build_agent
from egomem.runtime.timeline import Timeline
from egomem.store.sqlite import SQLiteStore
from egomem.stream.buffer import Frame
from egomem.stream.sources import Recording, replay

W, H, FPS = 640, 480, 2.0
TURN_GAP_S, ABSENT_S = 1.5, 5.0
DEFAULT_DATA = Path(__file__).resolve().parents[4] / "shared" / "data"


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


@register("realtime")
def run(options: BenchOptions) -> BenchResult:
    data = options.data or DEFAULT_DATA
    minutes = float(options.extra.get("minutes", 1.0 if options.quick else 10.0))
    rec, visits = build_stream(data, minutes)
    with tempfile.TemporaryDirectory() as tmp:
        cfg = load_config(data_dir=tmp, environ={})
        store = SQLiteStore(Path(tmp) / "memory.db")
        timeline = Timeline()
        models = Models(cfg)
        t_load = time.perf_counter()
        for m in (models.vad, models.text, models.face, models.voice, models.transcriber, models.trigger):
            assert m is not None  # load every model before the clock starts
        load_s = time.perf_counter() - t_load
        agent = build_agent(cfg, store, models, timeline)
        result = agent.run(replay(rec), lockstep=True)
        switches = [(e.time, e.fields.get("user")) for e in timeline.of_type("memchunk") if e.fields["level"] == 1]
        users = len(store.list_users())
        store.close()
    latencies = []
    for (t0, _), nxt in zip(visits, [*visits[1:], (rec.duration_s, "")], strict=True):
        hit = next((t for t, u in switches if t0 <= t < nxt[0] and u is not None), None)
        if hit is not None:
            latencies.append(hit - t0)
    missed = len(visits) - len(latencies)
    dur = result.duration_s
    rtf = {
        "ingest": result.times.ingest / dur,
        "dialog": result.times.dialog / dur,
        "retrieval": result.times.retrieval / dur,
        "memory": result.times.memory / dur,
    }
    metrics = {
        "stream_s": round(dur, 1),
        "visits": len(visits),
        "speakers": len({s for _, s in visits}),
        "users_in_store": users,
        "sessions_found": len(result.sessions),
        "rtf_overall": result.wall_s / dur,
        "rtf_by_process": rtf,
        "level1_latency_s_p50": float(np.median(latencies)) if latencies else None,
        "level1_latency_s_p95": float(np.percentile(latencies, 95)) if latencies else None,
        "level1_missed_visits": missed,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "model_load_s": load_s,
        "load_avg_1min": os.getloadavg()[0],
    }
    rows = [[k, v] for k, v in metrics.items() if k != "rtf_by_process"]
    rows += [[f"rtf {k}", v] for k, v in rtf.items()]
    notes = [
        "rtf_overall = wall / stream seconds with the three processes running concurrently (lockstep polls)",
        "Level-1 latency: first frame of a visit -> Level-1 MemChunk for that visitor (poll interval 2 s)",
    ]
    return BenchResult(
        "realtime", metrics, [(f"realtime, {dur / 60:.1f} min stream", ["metric", "value"], rows)], notes
    )
