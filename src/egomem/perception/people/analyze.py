"""The product's entry points: `analyze_people(path)` for a clip, `PeopleSession` for a live stream.

A clip: frames sampled at the tracker's fps -> face tracks (tracks.py) with lip activity
(lips.py); the audio -> voice clusters by the product's offline `Diarizer`; both -> windows of
evidence -> links (link.py); optional reference stills name tracks (report.py)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from egomem.config import FaceConfig, VoiceConfig
from egomem.errors import InputError
from egomem.media import SAMPLE_RATE
from egomem.perception.diarization import Diarization, DiarizationConfig, Diarizer, OnlineDiarizer
from egomem.perception.face import FaceBox, FaceEncoder, load_image
from egomem.perception.people.link import EvidenceAccumulator, LinkConfig, LinkDecision, observe_windows
from egomem.perception.people.lips import MouthMeter
from egomem.perception.people.report import (
    FaceLookup,
    PeopleReport,
    Timing,
    find_people,
    name_tracks,
    reference_lookup,
)
from egomem.perception.people.tracks import FaceTracker, TrackerConfig
from egomem.stream.buffer import Frame
from egomem.stream.sources import Recording, read_clip, read_recording


@dataclass(frozen=True)
class PeopleConfig:
    tracker: TrackerConfig = field(default_factory=TrackerConfig)
    link: LinkConfig = field(default_factory=LinkConfig)
    diarization: DiarizationConfig = field(default_factory=DiarizationConfig)
    # An unlinked voice is a person from this much speech: resemblyzer's 1.6 s window (the voice
    # config's short_speech_s); less is not one full embedding of a voice.
    min_voice_s: float = VoiceConfig().short_speech_s
    name_threshold: float = FaceConfig().threshold  # reference stills: the product's face threshold


class PeopleAnalyzer:
    """Holds the models (face encoder, 68-point landmarks, voice encoder) across clips."""

    def __init__(
        self,
        config: PeopleConfig | None = None,
        encoder: FaceEncoder | None = None,
        diarizer: Diarizer | None = None,
        mouth: MouthMeter | None = None,
    ) -> None:
        self.config = config or PeopleConfig()
        self.encoder = encoder or FaceEncoder()
        self.diarizer = (diarizer or Diarizer()).with_config(self.config.diarization)
        self.mouth = mouth or MouthMeter()

    def load(self) -> None:
        """Load every model now (the face detector and descriptor, the 68-point landmarks, Silero
        and resemblyzer), so that timings leave loading out."""
        probe = np.zeros((64, 64, 3), np.uint8)
        self.encoder.detect_scored(probe)
        self.mouth.opening(np.zeros((200, 200, 3), np.uint8), FaceBox(50, 150, 150, 50))
        self.diarizer.encoder._encoder()
        self.diarizer.diarize(np.zeros(SAMPLE_RATE, np.float32) + 1e-3)

    def references(self, refs: Mapping[str, str | Path | np.ndarray]) -> dict[str, np.ndarray]:
        """Descriptor of the face in each reference still (a path or an image array)."""
        out: dict[str, np.ndarray] = {}
        for name, ref in refs.items():
            img = load_image(ref) if isinstance(ref, str | Path) else ref
            obs = self.encoder.observe(img)
            if obs is None:
                raise InputError(f"no face found in the reference still for {name!r}")
            out[name] = obs.vector
        return out

    def analyze(
        self,
        path: str | Path,
        *,
        start_s: float | None = None,
        end_s: float | None = None,
        references: Mapping[str, str | Path | np.ndarray] | None = None,
        lookup: FaceLookup | None = None,
    ) -> PeopleReport:
        """Analyse a recording (video, or audio only), whole or its part [start_s, end_s)."""
        t0 = time.perf_counter()
        fps = self.config.tracker.fps
        if start_s is not None or end_s is not None:
            a = start_s or 0.0
            rec = read_clip(path, a, end_s if end_s is not None else a + 1e9, fps=fps)
        else:
            rec = read_recording(path, fps=fps)
        decode_s = time.perf_counter() - t0
        report = self.analyze_recording(rec, source=str(path), references=references, lookup=lookup)
        report.timing.decode_s = decode_s
        report.timing.wall_s += decode_s
        if report.duration_s > 0:
            report.timing.rtf = report.timing.wall_s / report.duration_s
        return report

    def analyze_recording(
        self,
        rec: Recording,
        *,
        source: str = "",
        references: Mapping[str, str | Path | np.ndarray] | None = None,
        lookup: FaceLookup | None = None,
    ) -> PeopleReport:
        """Analyse decoded audio and frames (`stream.sources.Recording`)."""
        c = self.config
        fps = c.tracker.fps
        load = _loadavg()
        w0, c0 = time.perf_counter(), time.process_time()
        tracker = FaceTracker(self.encoder, c.tracker, self.mouth)
        for f in rec.frames:
            tracker.update(f.t, f.image)
        tracks = tracker.finish()
        w1 = time.perf_counter()
        diar = self.diarizer.diarize(rec.listen) if rec.listen.size else Diarization([], np.zeros((0, 0), np.float32))
        w2 = time.perf_counter()
        duration = max(rec.listen.size / SAMPLE_RATE, (rec.frames[-1].t + 1.0 / fps) if rec.frames else 0.0)
        decision = EvidenceAccumulator(c.link)
        for w in observe_windows(tracks, diar.turns, 0.0, duration, fps, c.link):
            decision.add(w)
        links = decision.decide()
        if references:
            lookup = reference_lookup(self.references(references), c.name_threshold)
        names = name_tracks(tracks, lookup) if lookup is not None else {}
        people = find_people(tracks, diar, links, names, fps, c.min_voice_s)
        w3 = time.perf_counter()
        timing = Timing(
            faces_s=w1 - w0, voices_s=w2 - w1, link_s=w3 - w2, wall_s=w3 - w0, cpu_s=time.process_time() - c0,
            rtf=(w3 - w0) / duration if duration > 0 else 0.0, loadavg_start=load,
            cpu_rtf=(time.process_time() - c0) / duration if duration > 0 else 0.0,
        )  # fmt: skip
        warnings = list(rec.warnings)
        if not rec.frames:
            warnings.append("no video frames: no face tracks")
        if rec.listen.size == 0:
            warnings.append("no audio: no voices")
        return PeopleReport(
            source, duration, fps, tracks, diar, links, people, names, warnings, timing, asdict(tracker.stats)
        )


def analyze_people(
    path: str | Path,
    *,
    references: Mapping[str, str | Path | np.ndarray] | None = None,
    start_s: float | None = None,
    end_s: float | None = None,
    config: PeopleConfig | None = None,
) -> PeopleReport:
    """Who was seen and heard in a recording, with the evidence for every face-voice link (models
    load first, so the report's timing is the analysis alone)."""
    analyzer = PeopleAnalyzer(config)
    analyzer.load()
    return analyzer.analyze(path, start_s=start_s, end_s=end_s, references=references)


class PeopleSession:
    """The same analysis, incrementally, for the live loop: `feed(audio, frames)` with pieces of
    any length in stream order; a window is judged once its voice labels are final (the online
    diarizer's delay) and its frames have arrived. Track ids are the tracker's (tracks are not
    merged live); `decision()` links at any time."""

    def __init__(self, analyzer: PeopleAnalyzer, start_s: float = 0.0) -> None:
        c = analyzer.config
        self.config = c
        self.tracker = FaceTracker(analyzer.encoder, c.tracker, analyzer.mouth)
        self.diarizer = OnlineDiarizer(analyzer.diarizer)
        self.evidence = EvidenceAccumulator(c.link)
        self._start = start_s
        self._heard_s = 0.0
        self._last_frame: float | None = None
        self._next = start_s

    def feed(self, audio: np.ndarray | None = None, frames: Iterable[Frame] = ()) -> int:
        """Add audio (16 kHz, continuing the stream) and frames (stream times); returns the windows judged."""
        for f in frames:
            self.tracker.update(f.t, f.image)
            self._last_frame = f.t
        if audio is not None and np.asarray(audio).size:
            self.diarizer.feed(audio)
            self._heard_s += np.asarray(audio).size / SAMPLE_RATE
        ready = self._start + self._heard_s - self.diarizer.delay_s
        if self._last_frame is not None:
            ready = min(ready, self._last_frame)
        w = self.config.link.window_s
        judged = 0
        while self._next + w <= ready + 1e-9:
            tracks = self.tracker.tracks(confirmed=False)
            for obs in observe_windows(tracks, self.diarizer.turns, self._next, self._next + w, self.config.tracker.fps,
                                       self.config.link):  # fmt: skip
                self.evidence.add(obs)
                judged += 1
            self._next += w
        return judged

    def decision(self) -> LinkDecision:
        return self.evidence.decide()


def _loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None
