"""Memorising a long recording clip by clip, resumable.

The recording is cut into clips (30 s by default) decoded one at a time, so a long file
is never held in memory. Each clip runs through the whole agent (identification,
sessions, extraction, update) in lockstep, with a fresh agent over the shared store and
models: identities and facts carry from clip to clip through the store only, so a run
that is interrupted and resumed builds the same memory as one that is not. A session
that spans a clip boundary is cut there (as M3-Agent cuts its 30 s clips), and so is a user
turn: the clip's end flushes it, its part in the clip is transcribed and stored with that clip's
session (`EgoMem.stop`), and the next clip hears the rest as a turn of its own. Carrying the open
turn over instead would make a clip depend on the one before, and a resumed run differ from a
straight one.

Progress is a small JSON file per recording (its sha256) in `<data_dir>/memorize/`,
rewritten atomically after each finished clip; a clip is recorded only when all of its
memory is written. `should_stop` is asked between clips (Ctrl-C sets it): a stopped run
leaves whole clips only. A clip that cannot be decoded stops the run with a one-line
error before anything of it reaches the store. Delete the progress file to memorise a
recording again from the start.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from egomem.config import Config
from egomem.errors import InputError
from egomem.runtime.build import Models, build_agent
from egomem.runtime.timeline import Timeline
from egomem.store import MemoryStore
from egomem.stream.sources import read_clip, recording_duration, replay

DEFAULT_CLIP_S = 30.0


@dataclass
class ClipDone:
    index: int
    start_s: float
    end_s: float
    sessions: int
    memory_ops: int
    failed_sessions: list[str]
    wall_s: float
    cpu_s: float


@dataclass
class Progress:
    recording: str  # sha256 of the file
    path: str
    clip_s: float
    origin: float  # wall time (epoch seconds) of the recording's start
    duration_s: float
    clips: list[ClipDone] = field(default_factory=list)

    def done(self) -> set[int]:
        return {c.index for c in self.clips}


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def clip_spans(duration_s: float, clip_s: float) -> list[tuple[float, float]]:
    """[start, end) of each clip; a last piece shorter than a second joins the clip before."""
    if clip_s <= 0:
        raise InputError(f"clip length must be positive, got {clip_s}")
    spans: list[tuple[float, float]] = []
    t = 0.0
    while t < duration_s - 1e-6:
        end = min(t + clip_s, duration_s)
        if duration_s - end < 1.0:
            end = duration_s
        spans.append((t, end))
        t = end
    return spans


class Memorizer:
    def __init__(self, config: Config, store: MemoryStore, models: Models, *, clip_s: float = DEFAULT_CLIP_S) -> None:
        self.config, self.store, self.models = config, store, models
        self.clip_s = clip_s
        self.progress_dir = Path(config.data_dir) / "memorize"

    def progress_file(self, sha: str) -> Path:
        return self.progress_dir / f"{sha}.json"

    def load_progress(self, path: Path, origin: float | None) -> Progress:
        """The recording's progress so far, or a new one (origin: when it was recorded;
        default: its file time minus its length, i.e. the recording ended when written)."""
        sha = file_sha256(path)
        f = self.progress_file(sha)
        if f.is_file():
            raw = json.loads(f.read_text())
            prog = Progress(**{**raw, "clips": [ClipDone(**c) for c in raw["clips"]]})
            if prog.clip_s != self.clip_s:
                raise InputError(
                    f"{path.name} was memorised in {prog.clip_s:g} s clips; resume with --clip {prog.clip_s:g} "
                    f"or delete {f} to start again"
                )
            return prog
        duration = recording_duration(path)
        if duration <= 0:
            raise InputError(f"{path.name} has no audio or video to memorise")
        start = origin if origin is not None else path.stat().st_mtime - duration
        return Progress(sha, str(path), self.clip_s, start, duration)

    def run(
        self,
        path: str | Path,
        *,
        origin: float | None = None,
        stereo_duplex: bool = False,
        on_clip: Callable[[Progress, ClipDone | None], None] | None = None,
        should_stop: Callable[[], bool] = lambda: False,
    ) -> Progress:
        """Memorise every clip not done yet; returns the progress (all clips when finished)."""
        p = Path(path)
        if not p.is_file():
            raise InputError(f"recording not found: {p}")
        prog = self.load_progress(p, origin)
        spans = clip_spans(prog.duration_s, prog.clip_s)
        if on_clip:
            on_clip(prog, None)
        for index, (start, end) in enumerate(spans):
            if index in prog.done():
                continue
            if should_stop():
                break
            prog.clips.append(self._clip(p, prog, index, start, end, stereo_duplex))
            self._save(prog)
            if on_clip:
                on_clip(prog, prog.clips[-1])
        return prog

    def _clip(self, p: Path, prog: Progress, index: int, start: float, end: float, stereo: bool) -> ClipDone:
        t0, c0 = time.perf_counter(), time.process_time()
        rec = read_clip(p, start, end, fps=self.config.runtime.video_fps, stereo_duplex=stereo)
        agent = build_agent(self.config, self.store, self.models, Timeline(), command="memorize")
        agent.wall_origin = prog.origin + start  # the clip's sessions are dated in the recording's time
        result = agent.run(replay(rec), lockstep=True)
        return ClipDone(
            index=index,
            start_s=start,
            end_s=end,
            sessions=len(result.sessions),
            memory_ops=sum(len(o.applied.ops) for o in result.outcomes),
            failed_sessions=[o.reason for o in result.outcomes if not o.ok],
            wall_s=round(time.perf_counter() - t0, 3),
            cpu_s=round(time.process_time() - c0, 3),
        )

    def _save(self, prog: Progress) -> None:
        self.progress_dir.mkdir(parents=True, exist_ok=True)
        f = self.progress_file(prog.recording)
        tmp = f.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(prog), indent=1))
        os.replace(tmp, f)  # atomic: a kill leaves the old progress or the new, never half
