"""Live sources: a camera and a microphone (and optionally the assistant's loudspeaker
feed) read as 80 ms steps, for `egomem live`.

Devices are opened with PyAV's device input (FFmpeg's libavdevice: `v4l2` cameras, `alsa`
microphones, and `lavfi` virtual devices) rather than sounddevice + OpenCV: PyAV already
decodes recordings here, its wheel carries FFmpeg (no PortAudio or OpenCV to install), and
a virtual `lavfi` device goes through exactly the code path a real one does, so tests need
no hardware.

The microphone is the clock: a step is yielded each time 1,280 samples (80 ms at 16 kHz)
have arrived, with the camera frames that arrived meanwhile. Without a microphone, the
wall clock paces silent steps. Under back-pressure (the agent slower than real time)
frames are dropped first (only the newest few wait), then the oldest audio beyond
`max_backlog_s`; both are counted in `LiveStats`.
"""

from __future__ import annotations

import errno
import queue
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from egomem.errors import InputError
from egomem.media import SAMPLE_RATE
from egomem.stream.buffer import Frame
from egomem.stream.clock import SAMPLES_PER_STEP, STEP_S
from egomem.stream.sources import Step

FORMATS = {"v4l2": "video4linux2", "alsa": "alsa", "lavfi": "lavfi", "oss": "oss", "x11grab": "x11grab"}
FRAME_QUEUE = 2  # frames waiting for the consumer; older ones are dropped (and counted)


@dataclass(frozen=True)
class Device:
    """One input device: an FFmpeg input format and its URL (`v4l2` + `/dev/video0`,
    `alsa` + `default`, `lavfi` + `sine=frequency=440`), plus input options."""

    kind: str  # "camera", "microphone" or "speaker"
    format: str
    url: str
    options: tuple[tuple[str, str], ...] = ()

    def __str__(self) -> str:
        return f"{self.format}:{self.url}"


def parse_device(text: str, kind: str) -> Device | None:
    """`none` -> None; `/dev/videoN` -> a v4l2 camera; `FORMAT:URL` for any input format
    (`alsa:hw:1,0`, `lavfi:sine=frequency=440`); a bare ALSA name (`default`, `hw:1`)
    for a microphone or speaker."""
    t = text.strip()
    if not t or t.lower() == "none":
        return None
    if t.startswith("/dev/video"):
        return Device(kind, "v4l2", t)
    fmt, sep, url = t.partition(":")
    if sep and fmt in FORMATS:
        return Device(kind, fmt, url)
    if kind == "camera":
        raise InputError(
            f"camera {t!r}: expected /dev/videoN, none, or FORMAT:URL (format one of {', '.join(FORMATS)})"
        )
    return Device(kind, "alsa", t)


@dataclass
class DeviceInfo:
    kind: str
    spec: str
    name: str


def list_devices(sys_root: Path = Path("/")) -> list[DeviceInfo]:
    """Cameras (`/dev/video*`, named from sysfs) and ALSA capture devices (`/proc/asound`)."""
    found: list[DeviceInfo] = []
    for dev in sorted((sys_root / "dev").glob("video*")):
        name_file = sys_root / "sys/class/video4linux" / dev.name / "name"
        name = name_file.read_text().strip() if name_file.is_file() else ""
        found.append(DeviceInfo("camera", f"/dev/{dev.name}", name))
    pcm = sys_root / "proc/asound/pcm"
    if pcm.is_file():
        for line in pcm.read_text().splitlines():
            # "00-00: ALC257 Analog : ALC257 Analog : playback 1 : capture 1"
            ids, _, rest = line.partition(":")
            card, _, sub = ids.strip().partition("-")
            if "capture" in rest and card.isdigit() and sub.isdigit():
                found.append(DeviceInfo("microphone", f"alsa:hw:{int(card)},{int(sub)}", rest.split(":")[0].strip()))
    return found


@dataclass
class LiveStats:
    steps: int = 0
    frames_received: int = 0
    frames_dropped: int = 0
    audio_dropped_s: float = 0.0
    warnings: list[str] = field(default_factory=list)


def open_device(dev: Device) -> Any:
    """The PyAV container of a device; a missing or busy device is a one-line InputError."""
    import av

    try:
        return av.open(dev.url, format=FORMATS[dev.format], options=dict(dev.options), timeout=5.0)
    except av.error.FFmpegError as exc:
        code = getattr(exc, "errno", None)
        if code == errno.ENOENT:
            raise InputError(f"{dev.kind} {dev} not found (`egomem live --list-devices` lists what is here)") from exc
        if code == errno.EBUSY:
            raise InputError(f"{dev.kind} {dev} is busy: another program is using it") from exc
        raise InputError(f"cannot open {dev.kind} {dev}: {exc.strerror or exc}") from exc


class LiveSource:
    """Reads the devices in background threads; `steps()` yields until `close()`, the end
    of the microphone's stream, or `duration_s`."""

    def __init__(
        self,
        mic: Device | None,
        camera: Device | None,
        speaker: Device | None = None,
        *,
        fps: float = 2.0,
        max_backlog_s: float = 5.0,
        duration_s: float | None = None,
    ) -> None:
        if mic is None and camera is None:
            raise InputError("live input needs a microphone or a camera (both are none)")
        self.stats = LiveStats()
        self._fps = fps
        self._duration = duration_s
        self._max_backlog = int(max_backlog_s * SAMPLE_RATE)
        self._stop = threading.Event()
        self._audio: queue.Queue[np.ndarray | None] = queue.Queue()
        self._speak: queue.Queue[np.ndarray | None] = queue.Queue()
        self._frames: deque[np.ndarray] = deque()
        self._frames_lock = threading.Lock()
        # Open every device before any thread starts: a missing one fails at once.
        opened = [(d, open_device(d)) for d in (mic, camera, speaker) if d is not None]
        self._has_mic = mic is not None
        self._mic_ended = False
        # Reading starts with `steps()`: the agent's models load first, and audio that
        # arrived meanwhile would only be dropped as backlog.
        self._threads = [threading.Thread(target=self._read, args=(d, c), daemon=True) for d, c in opened]

    def close(self) -> None:
        """Stop reading (Ctrl-C calls this): `steps()` ends after the step in progress."""
        self._stop.set()

    # -- readers (one thread per device) --------------------------------------------------
    def _read(self, dev: Device, container: Any) -> None:
        import av

        try:
            with container:
                if dev.kind == "camera":
                    self._read_video(container)
                else:
                    self._read_audio(container, self._audio if dev.kind == "microphone" else self._speak)
        except av.error.FFmpegError as exc:
            self.stats.warnings.append(f"{dev.kind} {dev} stopped: {exc.strerror or exc}")
        finally:
            if dev.kind == "microphone":
                self._audio.put(None)  # the clock ends: steps() finishes the stream
            elif dev.kind == "camera" and not self._stop.is_set():
                self.stats.warnings.append(f"camera {dev} ended; going on with audio only")

    def _read_audio(self, container: Any, out: queue.Queue[np.ndarray | None]) -> None:
        import av

        if not container.streams.audio:
            raise InputError("the microphone device has no audio stream")
        resampler = av.AudioResampler(format="flt", layout="mono", rate=SAMPLE_RATE)
        for frame in container.decode(audio=0):
            if self._stop.is_set():
                return
            for res in resampler.resample(frame):
                out.put(res.to_ndarray().reshape(-1).astype(np.float32, copy=False))
        for res in resampler.resample(None):  # what the resampler still holds
            out.put(res.to_ndarray().reshape(-1).astype(np.float32, copy=False))

    def _read_video(self, container: Any) -> None:
        next_t = 0.0
        t0 = time.monotonic()
        for frame in container.decode(video=0):
            if self._stop.is_set():
                return
            # Keep `fps` frames a second by arrival time (device timestamps vary by driver).
            now = time.monotonic() - t0
            if now + 1e-6 < next_t:
                continue
            next_t = now + 1.0 / self._fps
            image = frame.to_ndarray(format="rgb24")
            with self._frames_lock:
                self.stats.frames_received += 1
                self._frames.append(image)
                while len(self._frames) > FRAME_QUEUE:
                    self._frames.popleft()
                    self.stats.frames_dropped += 1

    # -- the consumer side --------------------------------------------------------------------
    def steps(self) -> Iterator[Step]:
        for th in self._threads:
            th.start()
        pending = np.zeros(0, np.float32)
        speak_pending = np.zeros(0, np.float32)
        start = time.monotonic()
        i = 0
        while not self._stop.is_set():
            t = i * STEP_S
            if self._duration is not None and t >= self._duration:
                break
            if self._has_mic:
                got = self._take_audio(pending)
                if got is None:
                    break
                listen, pending = got
            else:
                delay = start + t + STEP_S - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                listen = np.zeros(SAMPLES_PER_STEP, np.float32)
            speak, speak_pending = self._take_speaking(speak_pending)
            with self._frames_lock:
                frames = [Frame(t, img) for img in self._frames]
                self._frames.clear()
            self.stats.steps += 1
            yield Step(i, t, listen, speak, frames)
            i += 1
        self._stop.set()

    def _take_audio(self, pending: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """One step of microphone audio (blocking), or None when the microphone ended."""
        chunks = [pending]
        have = pending.size
        while True:
            try:  # everything that has arrived, then wait only if a step is not complete
                chunk = self._audio.get(block=have < SAMPLES_PER_STEP and not self._mic_ended, timeout=0.5)
            except queue.Empty:
                if have >= SAMPLES_PER_STEP or self._mic_ended or self._stop.is_set():
                    break
                continue
            if chunk is None:
                self._mic_ended = True
                continue
            chunks.append(chunk)
            have += chunk.size
        if have < SAMPLES_PER_STEP:
            return None
        audio = np.concatenate(chunks)
        if audio.size > self._max_backlog:
            # The consumer fell behind by more than max_backlog_s: skip the oldest audio.
            drop = audio.size - self._max_backlog
            audio = audio[drop:]
            self.stats.audio_dropped_s += drop / SAMPLE_RATE
        return audio[:SAMPLES_PER_STEP], audio[SAMPLES_PER_STEP:]

    def _take_speaking(self, pending: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """What the loudspeaker feed has for this step (zeros where it has nothing yet)."""
        chunks = [pending]
        while True:
            try:
                chunk = self._speak.get_nowait()
            except queue.Empty:
                break
            if chunk is not None:
                chunks.append(chunk)
        audio = np.concatenate(chunks)
        out = np.zeros(SAMPLES_PER_STEP, np.float32)
        n = min(SAMPLES_PER_STEP, audio.size)
        out[:n] = audio[:n]
        return out, audio[n:]
