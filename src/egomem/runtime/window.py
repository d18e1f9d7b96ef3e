"""The stream as the agent's parts see it: one buffer, one clock.

Stream seconds drive the processes; memory is stored on the wall clock (what a person means by
"last Tuesday"): stream time t happened at wall time `wall_origin + t`. Built before the parts
so that retrieval receives its window and clock when it is built.
"""

from __future__ import annotations

import time

import numpy as np

from egomem.stream.buffer import StreamBuffer


class AgentStream:
    def __init__(self, buffer_s: float, wall_origin: float | None = None) -> None:
        self.buffer = StreamBuffer(capacity_s=buffer_s)
        self.wall_origin = time.time() if wall_origin is None else wall_origin

    @property
    def now_s(self) -> float:
        return self.buffer.now_s

    def wall(self, t: float) -> float:
        """The wall-clock time of stream time `t`."""
        return self.wall_origin + t

    def clock(self) -> float:
        """Now, on the wall clock (retrieval's clock)."""
        return self.wall_origin + self.buffer.now_s

    def window(self, max_age_s: float) -> BufferWindow:
        return BufferWindow(self.buffer, max_age_s)


class BufferWindow:
    """The retrieval poller's view of the stream buffer (MediaWindow)."""

    def __init__(self, buffer: StreamBuffer, max_age_s: float) -> None:
        self.buffer = buffer
        self.max_age_s = max_age_s

    def last_audio(self, seconds: float) -> np.ndarray | None:
        a = self.buffer.listen.last(seconds)
        return a if a.size else None

    def latest_frames(self, n: int) -> list[np.ndarray]:
        # Only fresh frames: a camera that stopped must not keep "seeing" the last person.
        fresh = self.buffer.video.since(self.buffer.now_s - self.max_age_s)
        return [f.image for f in fresh[-n:]]
