"""Mimi codes through the `moshi` package (loaded only when its weights are a local file).

Not exercised by the tests here: neither `moshi` nor the weights are installed on the
development machines (audio_tokens.mimi_status says which is missing).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.signal import resample_poly

from egomem.stream.clock import SAMPLES_PER_STEP
from egomem_training.data.audio_tokens import CARDINALITY, N_CODEBOOKS


class MimiTokenizer:
    name = "mimi"
    n_codebooks = N_CODEBOOKS
    cardinality = CARDINALITY

    def __init__(self, weights: Path) -> None:
        from moshi.models import loaders

        self._model = loaders.get_mimi(str(weights), device="cpu")
        self._model.set_num_codebooks(N_CODEBOOKS)

    def encode(self, audio16k: np.ndarray) -> np.ndarray:
        import torch

        steps = audio16k.size // SAMPLES_PER_STEP
        wav24 = resample_poly(audio16k[: steps * SAMPLES_PER_STEP].astype(np.float32), 3, 2)  # Mimi runs at 24 kHz
        with torch.no_grad():
            codes = self._model.encode(torch.from_numpy(wav24.astype(np.float32))[None, None])  # (1, K, frames)
        out = codes[0].T.numpy().astype(np.int16)[:steps]
        return np.pad(out, ((0, steps - out.shape[0]), (0, 0)))
