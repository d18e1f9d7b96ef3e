"""Live input through PyAV device input, driven by lavfi virtual devices: the same code
path as a v4l2 camera or an ALSA microphone, with no hardware."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from egomem.errors import InputError
from egomem.stream.clock import SAMPLES_PER_STEP
from egomem.stream.live import Device, LiveSource, list_devices, parse_device

DEMO = Path(__file__).parents[2] / "src/egomem/runtime/demo_assets/day1.mp4"
EGOMEM = str(Path(sys.executable).with_name("egomem"))


def _sine(seconds: float, realtime: bool = True) -> Device:
    pace = ",arealtime" if realtime else ""
    return Device("microphone", "lavfi", f"sine=frequency=440:sample_rate=44100:duration={seconds}{pace}")


def _testsrc(seconds: float, rate: int = 10) -> Device:
    return Device("camera", "lavfi", f"testsrc=size=160x120:rate={rate}:duration={seconds},realtime")


def test_parse_device() -> None:
    assert parse_device("none", "camera") is None
    assert parse_device("/dev/video2", "camera") == Device("camera", "v4l2", "/dev/video2")
    assert parse_device("hw:1,0", "microphone") == Device("microphone", "alsa", "hw:1,0")
    assert parse_device("alsa:default", "microphone") == Device("microphone", "alsa", "default")
    assert parse_device("lavfi:sine=f=440", "microphone") == Device("microphone", "lavfi", "sine=f=440")
    with pytest.raises(InputError, match="expected /dev/videoN"):
        parse_device("webcam", "camera")


def test_list_devices_reads_dev_sysfs_and_asound(tmp_path: Path) -> None:
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev/video0").touch()
    (tmp_path / "sys/class/video4linux/video0").mkdir(parents=True)
    (tmp_path / "sys/class/video4linux/video0/name").write_text("Integrated Camera\n")
    (tmp_path / "proc/asound").mkdir(parents=True)
    (tmp_path / "proc/asound/pcm").write_text(
        "00-00: ALC257 Analog : ALC257 Analog : playback 1 : capture 1\n00-03: HDMI 0 : HDMI 0 : playback 1\n"
    )
    found = [(d.kind, d.spec, d.name) for d in list_devices(tmp_path)]
    assert found == [("camera", "/dev/video0", "Integrated Camera"), ("microphone", "alsa:hw:0,0", "ALC257 Analog")]


def test_a_missing_device_is_one_clear_line() -> None:
    with pytest.raises(InputError, match=r"camera v4l2:/dev/video77 not found .*--list-devices") as err:
        LiveSource(None, Device("camera", "v4l2", "/dev/video77"))
    assert "\n" not in str(err.value)
    with pytest.raises(InputError, match="needs a microphone or a camera"):
        LiveSource(None, None)


def test_steps_follow_the_microphone_with_the_frames_that_arrived() -> None:
    src = LiveSource(_sine(1.6), _testsrc(1.6), fps=5.0)
    t0 = time.monotonic()
    steps = list(src.steps())
    wall = time.monotonic() - t0
    assert len(steps) == 20  # 1.6 s of audio = 20 steps of 80 ms
    assert [s.index for s in steps] == list(range(20))
    assert all(s.listen.shape == (SAMPLES_PER_STEP,) for s in steps)
    assert np.abs(np.concatenate([s.listen for s in steps])).max() > 0.05  # the sine is there
    assert 5 <= sum(len(s.frames) for s in steps) <= 9  # ~5 frames/s kept from a 10 fps camera
    assert steps[0].frames or steps[1].frames or steps[2].frames
    assert wall >= 1.3  # paced by the device, not faster
    assert src.stats.audio_dropped_s == 0.0


def test_a_slow_consumer_loses_frames_first_then_old_audio() -> None:
    src = LiveSource(_sine(2.4), _testsrc(2.4, rate=25), fps=25.0, max_backlog_s=0.5)
    seen = 0
    for _ in src.steps():
        seen += 1
        time.sleep(0.25)  # three times slower than real time
    assert src.stats.frames_dropped > 0
    assert src.stats.audio_dropped_s > 0.3
    # What was not dropped was delivered: 2.4 s of audio in all.
    assert seen * 0.08 + src.stats.audio_dropped_s == pytest.approx(2.4, abs=0.2)


def test_close_ends_the_steps_of_an_endless_device() -> None:
    src = LiveSource(Device("microphone", "lavfi", "anoisesrc=sample_rate=16000:amplitude=0.1,arealtime"), None)
    t0 = time.monotonic()
    n = 0
    for _ in src.steps():
        n += 1
        if n == 5:
            src.close()
    assert 5 <= n <= 6 and time.monotonic() - t0 < 5


def test_live_cli_on_virtual_devices_and_ctrl_c_finishes_the_session(tmp_path: Path) -> None:
    """`egomem live` on the demo clip played as a camera and a microphone in real time;
    Ctrl-C once Emily has spoken: her session is closed and remembered."""
    # `live` asks before keeping anyone's face and voice (docs/privacy.md); this test is about the devices and
    # Ctrl-C, so the recording's people are remembered as under `implicit` (test_consent_agent covers `ask`).
    env = {**os.environ, "EGOMEM_LLM__PROVIDER": "rules", "HF_HUB_OFFLINE": "1", "EGOMEM_PRIVACY__CONSENT": "implicit"}
    cmd = [
        EGOMEM, "--data-dir", str(tmp_path), "live", "--max-backlog", "120",
        "--mic", f"lavfi:amovie={DEMO},arealtime", "--camera", f"lavfi:movie={DEMO},realtime",
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    lines = []
    deadline = time.monotonic() + 240
    for line in proc.stdout:
        lines.append(line)
        if "heard" in line and "nurse" in line:
            proc.send_signal(signal.SIGINT)
            break
        assert time.monotonic() < deadline, "".join(lines)
    out, _ = proc.communicate(timeout=240)
    text = "".join(lines) + out
    assert proc.returncode == 0, text
    assert "stopping: finishing the open session" in text
    assert "session(s)" in text and "live input:" in text
    users = subprocess.run(
        [EGOMEM, "--data-dir", str(tmp_path), "users", "list"],
        env=env, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "Emily" in users, text
