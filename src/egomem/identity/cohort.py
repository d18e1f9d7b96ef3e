"""The shipped impostor cohort for s-norm: loading it (building it: `python -m egomem_training.voice_cohort`).

The cohort must look like the queries it normalises: short polls, sometimes noisy,
sometimes band-limited. A cohort of full-length clean clips makes short-clip s-norm
worse, so it is built from `chunk_s` chunks of speech from speakers we never
evaluate on (pyannote's AMI-style debug meetings and FSDD's 6 speakers), each chunk
in one of several conditions (clean, telephone band, white noise at 5-20 dB), all
passed through the same VAD + gating + level pipeline as live queries.
"""

from __future__ import annotations

from contextlib import nullcontext
from importlib import resources
from pathlib import Path

import numpy as np

from egomem.errors import InputError

COHORT_FILE = "voice_cohort.npz"


def load_cohort(path: Path | None = None, *, exclude: tuple[str, ...] = ()) -> np.ndarray:
    """The cohort matrix (float32, rows L2-normalised), from `path` or the shipped file.

    `exclude`: name prefixes (e.g. "fsdd:") of cohort speakers to leave out, for scoring speakers
    who are themselves in the cohort (their own chunks would depress their genuine scores)."""
    try:
        ref = resources.files("egomem.identity") / "data" / COHORT_FILE
        with resources.as_file(ref) if path is None else nullcontext(path) as p, np.load(p) as z:
            c = z["vectors"]
            names = [str(n) for n in z["names"]] if "names" in z.files else [""] * len(c)
    except (OSError, KeyError, ValueError) as exc:
        raise InputError(f"cannot read the voice cohort file: {exc}") from exc
    keep = np.array([not n.startswith(exclude) for n in names], dtype=bool) if exclude else np.ones(len(c), bool)
    if not keep.any():
        raise InputError(f"excluding {exclude} leaves an empty voice cohort")
    c = c[keep].astype(np.float32)
    return c / np.linalg.norm(c, axis=1, keepdims=True)
