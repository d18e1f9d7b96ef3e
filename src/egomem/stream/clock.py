"""The full-duplex step clock: the dialog model works in 80 ms steps (12.5 steps/s)."""

from __future__ import annotations

STEP_S = 0.08
STEPS_PER_S = 12.5
SAMPLES_PER_STEP = 1280  # at 16 kHz


def step_of(t: float) -> int:
    """The step that contains time t (seconds from stream start)."""
    return int(t / STEP_S + 1e-9)


def time_of(step: int) -> float:
    return step * STEP_S
