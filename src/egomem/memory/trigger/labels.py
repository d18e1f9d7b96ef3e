"""Step labels of sessions: the one labelling rule for every labelled stream.

The trigger's synthetic streams (synth.py) and the training-data builder
(egomem_training.data) both label with `session_labels`, so a stream means the same thing
to the trigger and to a dialog model trained on the builder's samples.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from egomem.memory.trigger.features import STEP_S

NO_DIALOG, START, IN_SESSION, END = 0, 1, 2, 3


def session_labels(spans_s: Sequence[tuple[float, float]], steps: int) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """Labels (int8, one per 80 ms step) and step spans (end included) of sessions given as
    (first speech, end of the last turn) in seconds, in time order. A session starts no
    earlier than the step after the previous one ends, so two back-to-back sessions are
    split by a 3 followed by a 1; every session is at least two steps long."""
    labels = np.zeros(steps, dtype=np.int8)
    sessions: list[tuple[int, int]] = []
    for s, e in spans_s:
        a = max(int(s / STEP_S), sessions[-1][1] + 1 if sessions else 0)
        b = max(min(int(e / STEP_S), steps - 1), a + 1)
        labels[a : b + 1] = IN_SESSION
        labels[a], labels[b] = START, END
        sessions.append((a, b))
    return labels, sessions
