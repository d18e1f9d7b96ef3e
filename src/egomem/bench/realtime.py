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
- where the time goes: busy seconds per component (ASR, TTS, face, voice, trigger,
  extraction + memory update) per stream second, timed around the product's own objects
  (`_Busy` wraps their methods with a timer and nothing else), and the process CPU time;
- peak resident memory.

`--set seeds=0,1,2` runs one stream per seed (fresh store each) and reports each seed,
the pooled figures and the spread. `--set llm=rules` (any registered LLM provider) runs
memory extraction with that provider instead of the default (the local GGUF model); the
provider used is recorded as `llm_provider`.
"""

from __future__ import annotations

import csv
import resource
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from egomem.bench import BenchOptions, BenchResult, data_root, register
from egomem.bench._visits import Visit, pool, score_visits
from egomem.config import Config, load_config
from egomem.errors import InputError
from egomem.perception.audio import SAMPLE_RATE, load_audio
from egomem.runtime.build import Models, Services, build_agent
from egomem.runtime.timeline import Timeline
from egomem.store.sqlite import SQLiteStore
from egomem.stream.buffer import Frame
from egomem.stream.sources import Recording, replay

W, H, FPS = 640, 480, 2.0
TURN_GAP_S, ABSENT_S = 1.5, 5.0
MAX_TURN_S = 12.0  # longer utterances are cut


def _canvas(photo: Path | None) -> np.ndarray:
    img = Image.new("RGB", (W, H), (90, 90, 90))
    if photo is not None:
        face = Image.open(photo).convert("RGB")
        img.paste(face, ((W - face.width) // 2, (H - face.height) // 2))
    return np.asarray(img)


@dataclass(frozen=True)
class Line:
    """One utterance of the stream's script: when it plays (stream seconds), who says it, and
    LibriSpeech's reference words (`whole` False: the audio was cut at MAX_TURN_S, the words go on)."""

    start: float
    end: float
    speaker: str
    visit: int  # index into build_stream's visits
    utt_id: str
    transcript: str
    whole: bool


def build_stream(data: Path, minutes: float, seed: int = 0) -> tuple[Recording, list[tuple[float, str]]]:
    """The stream and its visits: (time the visitor's face first appears, speaker id)."""
    rec, visits, _ = build_script(data, minutes, seed)
    return rec, visits


def build_script(data: Path, minutes: float, seed: int = 0) -> tuple[Recording, list[tuple[float, str]], list[Line]]:
    """build_stream's stream and visits, with what was said when (its `Line`s)."""
    speech = data / "speech_librispeech_test_other_10spk"
    faces = data / "faces_lfw_subset_10x10" / "images"
    if not (speech / "manifest.csv").is_file() or not faces.is_dir():
        raise InputError(
            f"bench realtime needs speech_librispeech_test_other_10spk and faces_lfw_subset_10x10 in {data}"
        )
    utts: dict[str, list[Path]] = defaultdict(list)
    words: dict[Path, tuple[str, str]] = {}
    with open(speech / "manifest.csv", newline="") as f:
        for row in csv.DictReader(f):
            utts[row["speaker_id"]].append(speech / row["path"])
            words[speech / row["path"]] = (row["utt_id"], row["transcript"])
    speakers = sorted(utts)
    people = sorted(p for p in faces.iterdir() if p.is_dir())
    photo_of = {spk: sorted(people[i % len(people)].glob("*.jpg")) for i, spk in enumerate(speakers)}
    rng = np.random.default_rng(seed)
    audio: list[np.ndarray] = []
    frames: list[Frame] = []
    visits: list[tuple[float, str]] = []
    lines: list[Line] = []
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
            full = load_audio(utts[spk][k])
            x = full[: int(MAX_TURN_S * SAMPLE_RATE)]
            utt_id, transcript = words[utts[spk][k]]
            begin = t + 0.5
            lines.append(Line(begin, begin + x.size / SAMPLE_RATE, spk, visit, utt_id, transcript, x.size == full.size))
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
    return Recording(listen, np.zeros(0, np.float32), frames, listen.size / SAMPLE_RATE), visits, lines


class _Busy:
    """Busy seconds per component: wraps methods of the product's objects with a timer
    (the wrapped code is the product's, unchanged; the wrappers are removed afterwards).
    Components run in different threads (ASR and TTS in the stream loop, face and voice in
    the retrieval poller, trigger and extraction in the memory process)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self._lock = threading.Lock()
        self._undo: list[Callable[[], None]] = []

    def wrap(self, obj: Any, method: str, label: str) -> None:
        fn = getattr(obj, method, None)
        if not callable(fn):
            return
        own = method in vars(obj)

        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.add(label, time.perf_counter() - t0)

        setattr(obj, method, timed)
        self._undo.append(lambda: setattr(obj, method, fn) if own else delattr(obj, method))

    def add(self, label: str, seconds: float) -> None:
        """One call of `label` that took `seconds` (from a wrapper, or an instrumentation hook)."""
        with self._lock:
            self.seconds[label] += seconds
            self.calls[label] += 1

    @contextmanager
    def active(self) -> Iterator[_Busy]:
        try:
            yield self
        finally:
            for undo in reversed(self._undo):
                undo()
            self._undo.clear()


def _instrument(busy: _Busy, models: Models, agent: Any) -> None:
    """The components whose busy time the bench reports (the methods the runtime calls)."""
    asr = models.transcriber
    busy.wrap(asr, "transcribe_cased" if callable(getattr(asr, "transcribe_cased", None)) else "transcribe", "asr")
    busy.wrap(models.speech, "synthesize", "tts")
    busy.wrap(models.face, "observe", "face")
    busy.wrap(models.voice, "observe", "voice")
    busy.wrap(models.trigger, "tag", "trigger")
    agent.on_session_handled(lambda done: busy.add("extraction", done.wall_s))


def run_seed(data: Path, minutes: float, seed: int, models: Models, cfg: Config, root: Path) -> dict[str, Any]:
    """One stream (its own seed and fresh store) through the agent, scored visit by visit."""
    rec, starts = build_stream(data, minutes, seed)
    ends = [t for t, _ in starts[1:]] + [rec.duration_s]
    visits = [Visit(t, end - ABSENT_S, spk) for (t, spk), end in zip(starts, ends, strict=True)]
    store = SQLiteStore(root / f"memory-seed{seed}.db")
    try:
        timeline = Timeline()
        agent = build_agent(Services(cfg, store, models), timeline)
        busy = _Busy()
        with busy.active():
            _instrument(busy, models, agent)
            cpu0 = time.process_time()
            result = agent.run(replay(rec), lockstep=True)
            cpu_s = time.process_time() - cpu0
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
        # Busy seconds per stream second of each component (inside the processes above:
        # dialog = ASR + TTS + VAD/turns + responder; retrieval = face + voice + matching and
        # Level 1; memory = trigger + extraction/update + session bookkeeping).
        rtf_by_component={k: v / dur for k, v in sorted(busy.seconds.items())},
        calls_by_component=dict(sorted(busy.calls.items())),
        cpu_s_per_stream_s=cpu_s / dur,  # process CPU time, all threads (2 cores: at most 2.0)
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
        llm = options.extra.get("llm")
        cfg = load_config(data_dir=tmp, environ={"EGOMEM_LLM__PROVIDER": llm} if llm else {})
        models = Models(cfg)
        t_load = time.perf_counter()
        for m in (
            models.vad,
            models.text,
            models.face,
            models.voice,
            models.transcriber,
            models.trigger,
            models.speech,
        ):
            assert m is not None  # load every model before the clock starts
        load_s = time.perf_counter() - t_load
        per_seed = {str(s): run_seed(data, minutes, s, models, cfg, Path(tmp)) for s in seeds}
    pooled, spread = pool(per_seed)
    for key in ("rtf_by_process", "rtf_by_component"):  # mean over seeds
        names = sorted({n for r in per_seed.values() for n in r[key]})
        pooled[key] = {n: float(np.mean([r[key].get(n, 0.0) for r in per_seed.values()])) for n in names}
    pooled["cpu_s_per_stream_s"] = float(np.mean([r["cpu_s_per_stream_s"] for r in per_seed.values()]))
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
        "llm_provider": cfg.llm.provider,
        "asr_provider": cfg.asr.provider,
        "trigger_provider": cfg.trigger.provider,
        "tts_provider": cfg.tts.provider,
    }
    keys = ["identity.purity", "identity.fragmentation", "identity.wrong_switches", "identity.users"]
    keys += ["level1_correct_latency_s_p50", "level1_correct_latency_s_p95", "level1_missed_visits"]
    keys += ["visits", "sessions_found", "rtf_overall", "cpu_s_per_stream_s"]
    keys += [f"rtf_by_process.{p}" for p in ("dialog", "retrieval", "memory", "ingest")]
    keys += [f"rtf_by_component.{c}" for c in ("asr", "tts", "face", "voice", "trigger", "extraction")]
    runs = {**{f"seed {s}": r for s, r in per_seed.items()}, "pooled": pooled}
    rows = [[k, *(_get(r, k) for r in runs.values())] for k in keys]
    notes = [
        "every visit is mapped to the Level-1 user holding most of it; each person to the user holding most "
        "of their visits; placeholders are not users",
        "correct-user latency: first frame of a visit -> Level-1 MemChunk of the visitor's own user (poll 2 s)",
        "rtf_overall = wall / stream seconds with the three processes running concurrently (lockstep polls)",
        "rtf_by_process / rtf_by_component: busy seconds per stream second (components are parts of processes);"
        " cpu_s_per_stream_s: process CPU seconds, all threads",
    ]
    title = f"realtime, {minutes:g} min stream per seed, seeds {','.join(map(str, seeds))}, llm {cfg.llm.provider}"
    return BenchResult("realtime", metrics, [(title, ["metric", *runs], rows)], notes)


def _get(d: dict[str, Any], dotted: str) -> Any:
    for part in dotted.split("."):
        d = d.get(part) if isinstance(d, dict) else None  # type: ignore[assignment]
    return "—" if d is None else d
