"""`egomem bench realtime`: a long multi-user stream through all three processes.

The stream is built from real data: LibriSpeech test-other speakers (10 people, their
own utterances) each paired with one LFW identity's photos (a different photo per
visit), with gaps between turns and absences between visits; people come back later.
By default (`--set pace=live`) it is fed at real-time pace and the agent runs as on a
device: steps as they come, polls and memory rounds without waiting, memory written by its
queue, compute included. `--set pace=lockstep` replays it as fast as possible, each poll and
memory round waited for, so who is identified when does not depend on machine speed. We report:

- who was identified: each visit is mapped to the Level-1 user holding most of it, and
  each person to the user holding most of their visits; purity, fragmentation and wrong
  switches follow (bench/_visits.py), with placeholders excluded;
- the correct-user Level-1 latency: from a visitor's first frame on camera to the
  Level-1 MemChunk of their own user (live: wall seconds), a missed visit counting as its
  whole length;
- live: perception lag (how far the stream loop runs behind the stream clock), memory lag
  (a session's end -> its memory written), the memory backlog at the end of the stream and
  after the drain (bounded by `--set drain=F` x the stream's length, default 2), the drain time;
- where the time goes: busy seconds per component (ASR, TTS, face, voice, trigger,
  extraction + memory update) per stream second, timed around the product's own objects
  (`_Busy` wraps their methods with a timer and nothing else), and the process CPU time;
- peak resident memory.

`--set seeds=0,1,2` runs one stream per seed (fresh store each) and reports each seed,
the pooled figures and the spread. `--set llm=rules` (any registered LLM provider) runs
memory extraction with that provider instead of the default (the local GGUF model); the
provider used is recorded as `llm_provider`. `--set config=llm.n_threads=1,...` runs with those
settings of the configuration (section.key=value) instead of the defaults, recorded as
`config_settings` (a labelled extra row, never the default's).
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

from egomem.bench import BenchOptions, BenchResult, data_root, parse_settings, register, settings_environ
from egomem.bench._turns import WrittenTurn, pool_turns, score_turns
from egomem.bench._visits import Visit, pool, score_visits
from egomem.config import Config, load_config
from egomem.errors import EgomemError, InputError
from egomem.perception.audio import SAMPLE_RATE, load_audio
from egomem.runtime.build import Models, Services, build_agent
from egomem.runtime.memory_rounds import SessionHandled
from egomem.runtime.timeline import Timeline
from egomem.store.sqlite import SQLiteStore
from egomem.stream.buffer import Frame
from egomem.stream.clock import STEP_S
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


class _LiveClock:
    """Wall seconds since the stream's first step, at each moment the bench records: when each step
    is handed to the agent (`fed`), when it is done with it (`done`), when each Level-1 MemChunk and
    each written session arrive (from the agent's threads)."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()
        self.origin = 0.0  # the agent's wall origin: session times are wall clock, minus it stream seconds
        self.fed: list[float] = []
        self.done: list[float] = []
        self.level1: list[tuple[float, str | None]] = []
        self.written: list[tuple[float, float]] = []  # (wall when written, stream time of the session's end)
        self.refined: list[tuple[float, float]] = []  # the same for the model's passes after the rules' writes
        self.jobs: list[tuple[float, float, float, int]] = []  # per first write: queued, run, yielded s; held rounds
        # Each user turn written, by its stream times: the user it went to (a later write of the same
        # turn, a held session released, replaces an earlier one).
        self.turns: dict[tuple[float, float], str | None] = {}

    def now(self) -> float:
        return time.perf_counter() - self.t0

    def fed_at(self, stream_t: float) -> float:
        """Wall time at which the step holding stream time `stream_t` was handed to the agent."""
        i = min(max(0, int(stream_t / STEP_S)), len(self.fed) - 1)
        return self.fed[i]

    def perception_lag(self) -> np.ndarray:
        """Per step: how far the stream loop finished it behind the stream clock (0 when on time)."""
        due = (np.arange(len(self.done)) + 1) * STEP_S
        return np.maximum(0.0, np.asarray(self.done) - due)

    def memory_lag(self, *, refined: bool = False) -> list[float]:
        """Per written session: the wall time from its end reaching the agent to its memory written (the
        first write; `refined`: the model's pass that followed it)."""
        return [w - self.fed_at(end) for w, end in (self.refined if refined else self.written)]

    def lag_by_session(self) -> list[dict[str, float]]:
        """Per written session, in write order, where its memory lag (wall s) went: `end` (stream s) and
        `lag`; `handover`: from its end reaching the agent to its job queued (the round's cadence and
        transcription; `held_rounds`: rounds that left it open for a turn still being heard); `waited`:
        queued, not running (behind other jobs, or its worker `yielded` to perception: the stretch just
        before the claim, at most `waited`); `run`: the job itself."""
        out: list[dict[str, float]] = []
        for (_, end), lag, job in zip(self.written, self.memory_lag(), self.jobs, strict=True):
            queued, run, yielded, held = job
            waited = max(0.0, queued - run)
            row = {"end": end, "lag": lag, "handover": lag - queued, "waited": waited, "yielded": min(yielded, waited)}
            out.append({k: round(v, 1) for k, v in row.items()} | {"run": round(run, 1), "held_rounds": held})
        return out

    def handled(self, done: SessionHandled) -> None:
        """One written session, told from the agent's memory thread."""
        when, end = self.now(), done.session.end - self.origin
        if done.refined:
            self.refined.append((when, end))
            return
        self.written.append((when, end))
        self.jobs.append((done.queued_s, done.wall_s, done.yielded_s, done.held_rounds))
        written_to = done.outcome.user_id if done.outcome.ok and not done.outcome.held else None
        for turn in done.session.turns:
            if turn.speaker == "user" and turn.start is not None and turn.end is not None:
                self.turns[(turn.start, turn.end)] = written_to

    def written_turns(self) -> list[WrittenTurn]:
        return [WrittenTurn(s, e, u) for (s, e), u in sorted(self.turns.items()) if u is not None]


def _pct(xs: Any, q: float) -> float | None:
    arr = np.asarray(xs, dtype=float)
    return float(np.percentile(arr, q)) if arr.size else None


def run_seed(
    data: Path,
    minutes: float,
    seed: int,
    models: Models,
    cfg: Config,
    root: Path,
    *,
    pace: str = "live",
    drain_factor: float = 2.0,
) -> dict[str, Any]:
    """One stream (its own seed and fresh store) through the agent, scored visit by visit.

    `pace`: "live" feeds the stream at real-time pace and the agent runs as it would on a device
    (steps as they come, memory in its queue, compute included: the latencies are wall seconds);
    "lockstep" replays it as fast as possible, each poll and memory round waited for (repeatable;
    the latencies are stream seconds). At the end of the stream the agent drains its memory queue for
    at most `drain_factor` x the stream's length."""
    live = pace == "live"
    rec, starts, lines = build_script(data, minutes, seed)
    ends = [t for t, _ in starts[1:]] + [rec.duration_s]
    visits = [Visit(t, end - ABSENT_S, spk) for (t, spk), end in zip(starts, ends, strict=True)]
    store = SQLiteStore(root / f"memory-seed{seed}.db")
    try:
        timeline = Timeline()
        clock = _LiveClock()
        agent = build_agent(Services(cfg, store, models), timeline, wall_origin=time.time())
        timeline.subscribe(
            lambda ev: (
                clock.level1.append((clock.now(), ev.fields.get("user")))
                if ev.type == "memchunk" and ev.fields.get("level") == 1
                else None
            )
        )
        clock.origin = agent.wall_origin
        agent.on_session_handled(clock.handled)
        busy = _Busy()
        with busy.active():
            _instrument(busy, models, agent)
            cpu0 = time.process_time()
            clock.t0 = time.perf_counter()
            agent.start()
            try:
                for step in replay(rec, realtime=live):
                    clock.fed.append(clock.now())
                    agent.advance(step, lockstep=not live)
                    clock.done.append(clock.now())
            finally:
                stream_wall, cpu_stream = clock.now(), time.process_time() - cpu0
                queue_end = agent.memory_queue()
                agent.stop(drain_timeout_s=drain_factor * rec.duration_s)
            wall_s, cpu_s = clock.now(), time.process_time() - cpu0
        result = agent.result(wall_s)
        queue = agent.memory_queue()
        switches = [(e.time, e.fields.get("user")) for e in timeline.of_type("memchunk") if e.fields["level"] == 1]
        users = store.list_users(include_placeholders=False)
        placeholders = {u.id for u in store.list_users()} - {u.id for u in users}
    finally:
        store.close()
    dur = result.duration_s
    if live:  # wall seconds: a visit from the moment its first frame reached the agent
        visits = [Visit(clock.fed_at(v.start), clock.fed_at(v.end), v.person) for v in visits]
        switches = clock.level1
    out = score_visits(visits, switches, placeholders)
    # Turn by turn, whose memory each line went to (the script's speaker against the visits' mapping).
    voiced = {
        e.time: {k: v for k, v in e.fields.items() if k in ("voice_score", "presumed_score")}
        for e in timeline.of_type("heard")
        if e.fields.get("how") == "voice"
    }
    out["turns"] = score_turns(clock.written_turns(), lines, out.pop("own"), out.pop("owner"), by_voice=voiced)
    out["identity"]["users"] = len(users)
    out["identity"]["placeholders"] = len(placeholders)
    times = result.times
    # Lags against the wall clock mean something only at real-time pace (a lockstep replay runs ahead).
    lag = clock.perception_lag() if live else np.zeros(0)
    memory_lag = clock.memory_lag() if live else []
    refine_lag = clock.memory_lag(refined=True) if live else []
    drain = result.memory_drain
    out.update(
        pace=pace,
        stream_s=round(dur, 1),
        visits=len(visits),
        sessions_found=len(result.sessions),
        sessions_written=len(result.outcomes),
        # The stream loop's wall time per stream second (live: 1.0 when it kept pace) and the whole
        # run's, the end-of-stream drain included.
        rtf_stream=stream_wall / dur,
        rtf_overall=wall_s / dur,
        # Busy seconds of perception (ingest, VAD, ASR, face and voice polls) and dialog per stream second.
        rtf_perception_dialog=(times.ingest + times.dialog + times.retrieval) / dur,
        rtf_by_process={
            "ingest": times.ingest / dur,
            "dialog": times.dialog / dur,
            "retrieval": times.retrieval / dur,
            "memory": times.memory / dur,
        },
        # Busy seconds per stream second of each component (inside the processes above:
        # dialog = ASR + TTS + VAD/turns + responder; retrieval = face + voice + matching and
        # Level 1; memory = trigger + extraction/update + session bookkeeping).
        rtf_by_component={k: v / dur for k, v in sorted(busy.seconds.items())},
        calls_by_component=dict(sorted(busy.calls.items())),
        cpu_s_per_stream_s=cpu_stream / dur,  # process CPU time while the stream ran, all threads (2 cores: <= 2.0)
        drain_cpu_s=cpu_s - cpu_stream,
        perception_lag_s_max=float(lag.max()) if lag.size else None,
        perception_lag_s_p95=_pct(lag, 95),
        memory_lag_s_p50=_pct(memory_lag, 50),
        memory_lag_s_p95=_pct(memory_lag, 95),
        # Each written session's end (stream s) and its lag (wall s), in the order written: which
        # job a slow write waited behind.
        memory_lag_by_session=clock.lag_by_session() if live else [],
        # memory.model_pass = "after": the model's pass over each session the rules wrote first.
        sessions_refined=len(clock.refined),
        refine_lag_s_p50=_pct(refine_lag, 50),
        refine_lag_s_p95=_pct(refine_lag, 95),
        refine_backlog_end_of_stream=None if queue_end is None else queue_end.refine_backlog,
        # As the product reports it (`egomem status`: done_at - session_end, wall clock).
        queue_lag_s_p50=None if queue is None else queue.lag_p50_s,
        queue_lag_s_p95=None if queue is None else queue.lag_p95_s,
        memory_backlog_end_of_stream=None if queue_end is None else queue_end.backlog,
        memory_backlog_after_drain=None if drain is None else drain.left,
        drain_s=None if drain is None else drain.wall_s,
        drain_timeout_s=None if drain is None else drain.timeout_s,
        drained=None if drain is None else drain.complete,
        # The bound stops new jobs, not the one in hand (a local-model job can take minutes): whether
        # everything was written within it.
        drained_within_bound=None
        if drain is None
        else drain.complete and drain.wall_s <= (drain.timeout_s or float("inf")),
    )
    return out


POOLED_MEANS = (
    "sessions_refined",
    "refine_backlog_end_of_stream",
    "cpu_s_per_stream_s",
    "rtf_stream",
    "rtf_perception_dialog",
    "drain_s",
    "memory_backlog_end_of_stream",
    "memory_backlog_after_drain",
)


LAGS = ("perception_lag_s_max", "perception_lag_s_p95", "memory_lag_s_p50", "memory_lag_s_p95")


def _pool_live(per_seed: dict[str, dict[str, Any]], pooled: dict[str, Any]) -> None:
    """The live figures over seeds: means of the per-seed ones, maxima of the lags, all drained or not."""
    runs = list(per_seed.values())
    for key in POOLED_MEANS:
        vals = [r[key] for r in runs if r.get(key) is not None]
        pooled[key] = float(np.mean(vals)) if vals else None
    for key in (*LAGS, "refine_lag_s_p50", "refine_lag_s_p95"):
        vals = [r[key] for r in runs if r.get(key) is not None]
        pooled[key] = max(vals) if vals else None  # the worst seed
    for key in ("drained", "drained_within_bound"):
        flags = [r[key] for r in runs if r.get(key) is not None]
        pooled[key] = all(flags) if flags else None


@register("realtime")
def run(options: BenchOptions) -> BenchResult:
    minutes = float(options.extra.get("minutes", 1.0 if options.quick else 10.0))
    pace = options.extra.get("pace", "live")
    if pace not in ("live", "lockstep"):
        raise InputError(f"--set pace= is live or lockstep, not {pace!r}")
    try:
        seeds = [int(s) for s in options.extra.get("seeds", "0").split(",") if s.strip()]
        drain_factor = float(options.extra.get("drain", 2.0))
    except ValueError as exc:
        raise InputError(f"--set seeds= expects integers separated by commas, drain= a number: {exc}") from exc
    if not seeds:
        raise InputError("--set seeds= names no seed")
    settings = parse_settings(options.extra.get("config", ""))
    data = data_root(options)
    with tempfile.TemporaryDirectory() as tmp:
        llm = options.extra.get("llm")
        environ = settings_environ(settings) | ({"EGOMEM_LLM__PROVIDER": llm} if llm else {})
        try:
            cfg = load_config(data_dir=tmp, environ=environ)
        except EgomemError as exc:
            raise InputError(f"--set config=: {exc}") from exc
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
        per_seed = {}
        for s in seeds:
            options.report(f"seed {s}: a {minutes:g}-minute stream, {pace}")
            per_seed[str(s)] = run_seed(data, minutes, s, models, cfg, Path(tmp), pace=pace, drain_factor=drain_factor)
    pooled, spread = pool(per_seed)
    for key in ("rtf_by_process", "rtf_by_component"):  # mean over seeds
        names = sorted({n for r in per_seed.values() for n in r[key]})
        pooled[key] = {n: float(np.mean([r[key].get(n, 0.0) for r in per_seed.values()])) for n in names}
    _pool_live(per_seed, pooled)
    pooled["turns"] = pool_turns([r["turns"] for r in per_seed.values()])
    for r in per_seed.values():
        del r["latencies"]
    metrics: dict[str, Any] = {
        "minutes": minutes,
        "pace": pace,
        "drain_factor": drain_factor,
        "seeds": per_seed,
        "pooled": pooled,
        "spread": spread,
        "rtf_overall": pooled["rtf_overall"],
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "model_load_s": load_s,
        "llm_provider": cfg.llm.provider,
        "config_settings": settings,  # what differs from the default configuration ({}: the default)
        "asr_provider": cfg.asr.provider,
        "trigger_provider": cfg.trigger.provider,
        "tts_provider": cfg.tts.provider,
    }
    keys = ["identity.purity", "identity.fragmentation", "identity.wrong_switches", "identity.users"]
    keys += [
        f"turns.{k}"
        for k in ("written", "wrong_person", "wrong_person_by_voice", "split", "unwritten_lines", "script_lines")
    ]
    keys += ["level1_correct_latency_s_p50", "level1_correct_latency_s_p95", "level1_missed_visits"]
    keys += ["visits", "sessions_found", "sessions_written"]
    keys += ["rtf_perception_dialog", "rtf_stream", "rtf_overall", "cpu_s_per_stream_s"]
    keys += [*LAGS, "sessions_refined", "refine_lag_s_p50", "refine_lag_s_p95", "refine_backlog_end_of_stream"]
    keys += ["memory_backlog_end_of_stream", "memory_backlog_after_drain", "drain_s", "drain_timeout_s"]
    keys += ["drained", "drained_within_bound"]
    keys += [f"rtf_by_process.{p}" for p in ("dialog", "retrieval", "memory", "ingest")]
    keys += [f"rtf_by_component.{c}" for c in ("asr", "tts", "face", "voice", "trigger", "extraction")]
    runs = {**{f"seed {s}": r for s, r in per_seed.items()}, "pooled": pooled}
    rows = [[k, *(_get(r, k) for r in runs.values())] for k in keys]
    axis = "wall seconds (live)" if pace == "live" else "stream seconds (lockstep)"
    notes = [
        "every visit is mapped to the Level-1 user holding most of it; a user belongs to the person whose visits it"
        " holds most, and each person's own user is the one of theirs holding most of their visits; placeholders"
        " are not users",
        "turns: each user turn the memory process wrote, matched to the script line it overlaps most: wrong_person"
        " = written to a user that belongs to another person (one person's words in another's memory), split ="
        " to a user of nobody else's that is not the speaker's own; unwritten_lines: script lines no written turn"
        " overlaps (not heard, an unknown voice, or held and dropped)",
        f"correct-user latency, in {axis}: first frame of a visit -> Level-1 MemChunk of the visitor's own user"
        " (poll 2 s); a missed visit counts as its whole length",
        "rtf_perception_dialog: busy seconds of ingest + dialog (VAD, ASR, responder, TTS) + retrieval (face, voice)"
        " per stream second; rtf_stream: the stream loop's wall / stream s (live: 1.0 = kept pace); rtf_overall:"
        " the whole run's wall, the end-of-stream drain included",
        "memory lag: a session's end reaching the agent -> its memory written (wall s; the first write: the rules"
        " with memory.model_pass = after); refine lag: the same to the model's pass; backlog: memory jobs"
        f" committed and not yet written; the drain starts no job after {drain_factor:g} x the stream's length"
        " (the job in hand finishes: drain_s may exceed the bound)",
        "cpu_s_per_stream_s: process CPU seconds while the stream ran, all threads",
        f"peak RSS of the whole run (models included): {metrics['peak_rss_mb']:.0f} MB",
    ]
    title = (
        f"realtime, {pace}, {minutes:g} min stream per seed, seeds {','.join(map(str, seeds))}, llm {cfg.llm.provider}"
    )
    return BenchResult("realtime", metrics, [(title, ["metric", *runs], rows)], notes)


def _get(d: dict[str, Any], dotted: str) -> Any:
    for part in dotted.split("."):
        d = d.get(part) if isinstance(d, dict) else None  # type: ignore[assignment]
    return "—" if d is None else d
