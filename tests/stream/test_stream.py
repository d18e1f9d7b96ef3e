"""Stream: step clock, ring buffers, recorded sources (real files)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from egomem.errors import InputError
from egomem.stream.buffer import AudioRing, Frame, FrameRing, StreamBuffer
from egomem.stream.clock import SAMPLES_PER_STEP, STEP_S, step_of, time_of
from egomem.stream.sources import read_recording, replay

DEMO = Path(__file__).resolve().parents[2] / "src" / "egomem" / "runtime" / "demo_assets"


def test_clock() -> None:
    assert pytest.approx(1.0) == STEP_S * 12.5
    assert step_of(0.0) == 0 and step_of(0.16) == 2 and step_of(0.1599) == 1
    assert time_of(25) == pytest.approx(2.0)


def test_audio_ring_wraps_and_addresses_by_time() -> None:
    ring = AudioRing(capacity_s=1.0)
    x = np.arange(40_000, dtype=np.float32)
    for i in range(0, x.size, 3000):
        ring.append(x[i : i + 3000])
    assert ring.end_s == pytest.approx(2.5)
    np.testing.assert_array_equal(ring.last(0.5), x[-8000:])
    np.testing.assert_array_equal(ring.window(2.0, 2.1), x[32000:33600])
    assert ring.window(0.0, 1.0).size == 0  # already overwritten
    assert ring.window(3.0, 4.0).size == 0  # not yet written


def test_frame_ring_and_buffer() -> None:
    frames = FrameRing(3)
    for t in range(5):
        frames.append(Frame(float(t), np.zeros((2, 2, 3), np.uint8)))
    assert [f.t for f in frames.latest(2)] == [3.0, 4.0] and [f.t for f in frames.since(3.5)] == [4.0]
    buf = StreamBuffer(capacity_s=5)
    buf.add_assistant_text(1.0, "hello")
    buf.add_assistant_text(9.0, "later")
    assert buf.assistant_text(0.0, 5.0) == "hello"


def test_read_real_av_clip(shared_data: Callable[[str], Path]) -> None:
    rec = read_recording(shared_data("av_hamilton_clip") / "short_hamilton_clip.mp4", fps=2)
    assert 10.0 < rec.duration_s < 10.6 and rec.listen.size > 9 * 16000
    assert 18 <= len(rec.frames) <= 22 and rec.frames[0].image.shape == (360, 640, 3)
    steps = list(replay(rec))
    assert len(steps) == int(np.ceil(rec.duration_s / STEP_S))
    assert all(s.listen.size == SAMPLES_PER_STEP for s in steps)
    assert sum(len(s.frames) for s in steps) == len(rec.frames)


def test_demo_recordings_decode() -> None:
    import json

    expected = json.loads((DEMO / "scenario.json").read_text())["day2"]["duration_s"]
    rec = read_recording(DEMO / "day2.mp4")
    assert rec.duration_s == pytest.approx(expected, abs=0.6) and len(rec.frames) >= 30 and not rec.warnings


def test_bad_recordings(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        read_recording(tmp_path / "nope.mp4")
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"\x00garbage" * 100)
    with pytest.raises(InputError):
        read_recording(junk)
    truncated = tmp_path / "cut.mp4"
    truncated.write_bytes((DEMO / "day2.mp4").read_bytes()[:40_000])
    try:
        rec = read_recording(truncated)
    except InputError:
        return  # a clear refusal is acceptable for a file cut before its index
    assert rec.duration_s < 22.0  # or partial content, kept
