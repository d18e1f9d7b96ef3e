"""A short two-channel dialog stream of real speech: two users, two sessions, assistant replies."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from egomem.memory.trigger.features import STEP_S
from egomem.perception.audio import SAMPLE_RATE, load_audio

DATA = Path(__file__).resolve().parents[1] / "data" / "trigger"

# (channel, file, pause before it in seconds); a None file marks a session boundary.
SCRIPT = [
    ("listen", "1688-142285-0003", 1.0),
    ("speak", "3080-5032-0000", 0.5),
    ("listen", "1688-142285-0009", 0.7),
    ("speak", "3080-5032-0003", 0.5),
    (None, None, 5.0),
    ("listen", "3331-159605-0001", 0.0),
    ("speak", "3080-5032-0004", 0.5),
    ("listen", "3331-159605-0006", 0.6),
    ("speak", "3080-5032-0000", 0.5),
]


@dataclass
class DialogStream:
    listen: np.ndarray
    speak: np.ndarray
    sessions: list[tuple[int, int]]  # true spans in steps


@pytest.fixture(scope="session")
def dialog_stream() -> DialogStream:
    t = 0.0
    clips: list[tuple[str, float, np.ndarray]] = []
    spans: list[list[float]] = []
    new_session = True
    for channel, name, pause in SCRIPT:
        t += pause
        if channel is None or name is None:
            new_session = True
            continue
        audio = load_audio(DATA / f"{name}.flac")
        clips.append((channel, t, audio))
        if new_session:
            spans.append([t, t])
            new_session = False
        t += audio.size / SAMPLE_RATE
        spans[-1][1] = t
    total = int((t + 2.0) * SAMPLE_RATE)
    listen, speak = np.zeros(total, np.float32), np.zeros(total, np.float32)
    for channel, start, audio in clips:
        buf = listen if channel == "listen" else speak
        a = int(start * SAMPLE_RATE)
        buf[a : a + audio.size] += audio
    return DialogStream(listen, speak, [(int(s / STEP_S), int(e / STEP_S)) for s, e in spans])
