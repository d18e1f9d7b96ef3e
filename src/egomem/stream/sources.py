"""Stream sources: a recorded file replayed in 80 ms steps (real-time or as fast as
possible), whole or clip by clip. Live camera and microphone: stream/live.py.

A recording holds the listening channel (the microphone) and optionally the
speaking channel (what the assistant said) as a second audio channel: a stereo
file's left channel is listening and right is speaking when `stereo_duplex=True`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from egomem.errors import InputError
from egomem.media import SAMPLE_RATE, load_audio, to_mono16k
from egomem.stream.buffer import Frame
from egomem.stream.clock import SAMPLES_PER_STEP, STEP_S

VIDEO_EXT = {".mp4", ".mkv", ".webm", ".mov", ".avi"}
AUDIO_EXT = {".wav", ".flac", ".ogg", ".mp3", ".m4a"}


@dataclass
class Step:
    """One 80 ms step of the stream."""

    index: int
    t: float
    listen: np.ndarray  # SAMPLES_PER_STEP samples (zeros where the recording has none)
    speak: np.ndarray
    frames: list[Frame] = field(default_factory=list)


@dataclass
class Recording:
    listen: np.ndarray
    speak: np.ndarray
    frames: list[Frame]
    duration_s: float
    warnings: list[str] = field(default_factory=list)


def read_recording(path: str | Path, *, fps: float = 2.0, stereo_duplex: bool = False) -> Recording:
    """Decode a whole recording: audio to 16 kHz, video frames sampled at `fps`."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"recording not found: {p}")
    warnings: list[str] = []
    suffix = p.suffix.lower()
    if suffix in AUDIO_EXT:
        listen, speak = _read_audio(p, stereo_duplex)
        frames: list[Frame] = []
        frames_dir = p.with_suffix("")
        if frames_dir.is_dir():
            frames = _read_frame_folder(frames_dir)
    else:
        listen, speak, frames, warnings = _read_av(p, fps, stereo_duplex)
    duration = max(listen.size / SAMPLE_RATE, frames[-1].t + 1 / fps if frames else 0.0)
    if listen.size == 0 and not frames:
        raise InputError(f"{p.name} has neither audio nor video that could be decoded")
    return Recording(listen, speak, frames, duration, warnings)


def _read_audio(p: Path, stereo_duplex: bool) -> tuple[np.ndarray, np.ndarray]:
    if not stereo_duplex:
        return load_audio(p), np.zeros(0, dtype=np.float32)
    import soundfile as sf

    data, sr = sf.read(str(p), always_2d=True, dtype="float32")
    if data.shape[1] < 2:
        raise InputError(f"{p.name}: stereo_duplex needs 2 channels, found {data.shape[1]}")
    return to_mono16k(data[:, 0], int(sr)), to_mono16k(data[:, 1], int(sr))


def _read_frame_folder(d: Path, start_s: float = 0.0, end_s: float = float("inf")) -> list[Frame]:
    """Frames named `<seconds>.jpg|png` (e.g. 12.5.jpg) in a folder beside an audio file
    (those in [start_s, end_s), timed from start_s)."""
    from PIL import Image

    frames = []
    for f in sorted(d.iterdir()):
        if f.suffix.lower() not in {".jpg", ".jpeg", ".png"}:
            continue
        try:
            t = float(f.stem)
        except ValueError:
            continue
        if start_s <= t < end_s:
            frames.append(Frame(t - start_s, np.asarray(Image.open(f).convert("RGB"))))
    return sorted(frames, key=lambda fr: fr.t)


def _read_av(p: Path, fps: float, stereo_duplex: bool) -> tuple[np.ndarray, np.ndarray, list[Frame], list[str]]:
    import av

    warnings: list[str] = []
    frames: list[Frame] = []
    chans: list[list[np.ndarray]] = [[], []]
    try:
        container = av.open(str(p))
    except av.error.FFmpegError as exc:
        raise InputError(f"cannot open {p.name}: {exc}") from exc
    with container:
        has_audio, has_video = bool(container.streams.audio), bool(container.streams.video)
        if not has_audio:
            warnings.append("no audio track: voice identification and the trigger see silence")
        if not has_video:
            warnings.append("no video track: face identification is off")
        streams = [s for s in (*container.streams.audio[:1], *container.streams.video[:1])]
        resampler = av.AudioResampler(format="fltp", layout="stereo", rate=SAMPLE_RATE) if has_audio else None
        next_t = 0.0
        try:
            for packet in container.demux(*streams):
                for frame in packet.decode():
                    if isinstance(frame, av.AudioFrame) and resampler is not None:
                        for out in resampler.resample(frame):
                            arr = out.to_ndarray()
                            chans[0].append(arr[0])
                            chans[1].append(arr[1])
                    # Sample video by timestamp, not by count: variable frame rates stay in time.
                    elif isinstance(frame, av.VideoFrame) and frame.time is not None and frame.time + 1e-6 >= next_t:
                        frames.append(Frame(float(frame.time), frame.to_ndarray(format="rgb24")))
                        next_t = float(frame.time) + 1.0 / fps
        except av.error.FFmpegError as exc:
            warnings.append(f"decoding stopped early ({exc}); keeping what was read")
    left = np.concatenate(chans[0]).astype(np.float32) if chans[0] else np.zeros(0, np.float32)
    right = np.concatenate(chans[1]).astype(np.float32) if chans[1] else np.zeros(0, np.float32)
    if stereo_duplex:
        return left, right, frames, warnings
    mono = (left + right) / 2 if left.size else left
    return mono, np.zeros(0, dtype=np.float32), frames, warnings


def replay(rec: Recording, *, realtime: bool = False) -> Iterator[Step]:
    """Yield the recording as 80 ms steps; with realtime=True, at wall-clock pace."""
    n_steps = int(np.ceil(rec.duration_s / STEP_S))
    fi = 0
    t_start = time.monotonic()
    for i in range(n_steps):
        t = i * STEP_S
        lo = i * SAMPLES_PER_STEP
        step_frames = []
        while fi < len(rec.frames) and rec.frames[fi].t < t + STEP_S:
            step_frames.append(rec.frames[fi])
            fi += 1
        yield Step(
            i, t, _pad(rec.listen[lo : lo + SAMPLES_PER_STEP]), _pad(rec.speak[lo : lo + SAMPLES_PER_STEP]), step_frames
        )
        if realtime:
            delay = t + STEP_S - (time.monotonic() - t_start)
            if delay > 0:
                time.sleep(delay)


def _pad(x: np.ndarray) -> np.ndarray:
    if x.size == SAMPLES_PER_STEP:
        return x
    out = np.zeros(SAMPLES_PER_STEP, dtype=np.float32)
    out[: x.size] = x
    return out


# -- clips of a long recording (egomem memorize) --------------------------------------------
def recording_duration(path: str | Path) -> float:
    """Seconds of a recording, read from its header (nothing is decoded)."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"recording not found: {p}")
    if p.suffix.lower() in SOUNDFILE_EXT:
        import soundfile as sf

        try:
            return float(sf.info(str(p)).duration)
        except RuntimeError as exc:
            raise InputError(f"cannot read {p.name}: {exc}") from exc
    import av

    try:
        with av.open(str(p)) as container:
            if container.duration is not None:
                return float(container.duration / av.time_base)
            spans = [(s.duration, s.time_base) for s in container.streams]
            return max((float(d * tb) for d, tb in spans if d is not None and tb is not None), default=0.0)
    except av.error.FFmpegError as exc:
        raise InputError(f"cannot open {p.name}: {exc}") from exc


SOUNDFILE_EXT = {".wav", ".flac", ".ogg"}


def read_clip(
    path: str | Path, start_s: float, end_s: float, *, fps: float = 2.0, stereo_duplex: bool = False
) -> Recording:
    """The part [start_s, end_s) of a recording, its times counted from start_s: a long
    recording is decoded clip by clip (seeking), never whole."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"recording not found: {p}")
    if end_s <= start_s:
        raise InputError(f"empty clip {start_s:.1f}-{end_s:.1f} s of {p.name}")
    if p.suffix.lower() in SOUNDFILE_EXT:
        listen, speak = _read_audio_span(p, start_s, end_s, stereo_duplex)
        frames_dir = p.with_suffix("")
        frames = _read_frame_folder(frames_dir, start_s, end_s) if frames_dir.is_dir() else []
        warnings: list[str] = []
    else:
        listen, speak, frames, warnings = _read_av_span(p, start_s, end_s, fps, stereo_duplex)
    return Recording(listen, speak, frames, end_s - start_s, warnings)


def _read_audio_span(p: Path, start_s: float, end_s: float, stereo_duplex: bool) -> tuple[np.ndarray, np.ndarray]:
    import soundfile as sf

    try:
        sr = sf.info(str(p)).samplerate
        data, sr = sf.read(str(p), start=int(start_s * sr), stop=int(end_s * sr), always_2d=True, dtype="float32")
    except RuntimeError as exc:
        raise InputError(f"cannot read {start_s:.0f}-{end_s:.0f} s of {p.name}: {exc}") from exc
    if not stereo_duplex:
        return to_mono16k(data, int(sr)), np.zeros(0, dtype=np.float32)
    if data.shape[1] < 2:
        raise InputError(f"{p.name}: stereo_duplex needs 2 channels, found {data.shape[1]}")
    return to_mono16k(data[:, 0], int(sr)), to_mono16k(data[:, 1], int(sr))


def _read_av_span(
    p: Path, start_s: float, end_s: float, fps: float, stereo_duplex: bool
) -> tuple[np.ndarray, np.ndarray, list[Frame], list[str]]:
    import av

    warnings: list[str] = []
    frames: list[Frame] = []
    chans: list[list[np.ndarray]] = [[], []]
    audio_t0: float | None = None  # stream time of the first resampled audio sample
    try:
        container = av.open(str(p))
    except av.error.FFmpegError as exc:
        raise InputError(f"cannot open {p.name}: {exc}") from exc
    with container:
        streams = [*container.streams.audio[:1], *container.streams.video[:1]]
        resampler = av.AudioResampler(format="fltp", layout="stereo", rate=SAMPLE_RATE)
        next_t = start_s
        try:
            if start_s > 0:  # to the keyframe before start_s; earlier content is skipped below
                container.seek(int(start_s * av.time_base), backward=True, any_frame=False)
            finished: set[int] = set()  # streams already past end_s: stop when all are
            for packet in container.demux(*streams):
                for frame in packet.decode():
                    if not isinstance(frame, (av.AudioFrame, av.VideoFrame)) or frame.time is None:
                        continue
                    if frame.time >= end_s:
                        finished.add(packet.stream.index)
                        continue
                    if isinstance(frame, av.AudioFrame):
                        if audio_t0 is None:
                            audio_t0 = float(frame.time)
                        for out in resampler.resample(frame):
                            arr = out.to_ndarray()
                            chans[0].append(arr[0])
                            chans[1].append(arr[1])
                    elif frame.time + 1e-6 >= next_t:
                        frames.append(Frame(float(frame.time) - start_s, frame.to_ndarray(format="rgb24")))
                        next_t = float(frame.time) + 1.0 / fps
                if len(finished) == len(streams):
                    break
        except av.error.FFmpegError as exc:
            raise InputError(f"{p.name} cannot be decoded at {start_s:.0f}-{end_s:.0f} s: {exc}") from exc
    # Cut the audio to [start_s, end_s): decoding began at the keyframe before start_s.
    skip = max(0, round(((start_s - audio_t0) if audio_t0 is not None else 0.0) * SAMPLE_RATE))
    n = round((end_s - start_s) * SAMPLE_RATE)
    left = np.concatenate(chans[0]).astype(np.float32)[skip : skip + n] if chans[0] else np.zeros(0, np.float32)
    right = np.concatenate(chans[1]).astype(np.float32)[skip : skip + n] if chans[1] else np.zeros(0, np.float32)
    if stereo_duplex:
        return left, right, frames, warnings
    mono = (left + right) / 2 if left.size else left
    return mono, np.zeros(0, dtype=np.float32), frames, warnings
