"""Inference: `EpisodicTrigger.tag(listen16k, speak16k)` -> one label per 80 ms step.

The network gives per-step posteriors, computed chunk-wise (chunks of up to 8192 steps
with overlapping margins, so a session that crosses a chunk edge is not cut); a Viterbi
pass then picks the best label sequence the session grammar allows
(0→0|1, 1→2|3, 2→2|3, 3→0|1), so every start has an end and adjacent sessions of two
users are split by a 3 directly followed by a 1. Opening a session costs `start_penalty`
(log-probability units, chosen on the training run's dev streams and shipped with the
weights): it removes short spurious sessions and splits the posteriors barely support.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from egomem.errors import InputError
from egomem.memory.trigger.features import N_FEATURES, FeatureExtractor, KnownVAD
from egomem.memory.trigger.metrics import sessions
from egomem.perception.threads import torch_single_thread
from egomem.providers import BuildContext
from egomem.registry import ProviderConfig

__all__ = ["CHUNK_STEPS", "EpisodicTrigger", "sessions", "viterbi"]

CHUNK_STEPS = 8192
MARGIN_STEPS = 512
WEIGHTS = Path(__file__).parent / "weights" / "trigger_bigru.pt"

_ALLOWED = np.full((4, 4), -np.inf)
for _a, _b in ((0, 0), (0, 1), (1, 2), (1, 3), (2, 2), (2, 3), (3, 0), (3, 1)):
    _ALLOWED[_a, _b] = 0.0


def viterbi(logp: np.ndarray, start_penalty: float = 0.0) -> np.ndarray:
    """Best label path under the session grammar; logp: (steps, 4) log-posteriors."""
    steps = logp.shape[0]
    if steps == 0:
        return np.zeros(0, dtype=np.int8)
    allowed = _ALLOWED.copy()
    allowed[0, 1] -= start_penalty
    allowed[3, 1] -= start_penalty
    score = logp[0].copy()
    score[1] -= start_penalty
    back = np.zeros((steps, 4), dtype=np.int8)
    for t in range(1, steps):
        cand = score[:, None] + allowed  # (from, to)
        back[t] = np.argmax(cand, axis=0)
        score = cand[back[t], np.arange(4)] + logp[t]
    path = np.zeros(steps, dtype=np.int8)
    path[-1] = int(np.argmax(score))
    for t in range(steps - 1, 0, -1):
        path[t - 1] = back[t, path[t]]
    return path


class EpisodicTrigger:
    """Loads the shipped BiGRU weights (or `weights`); features come from `extractor`."""

    def __init__(self, weights: Path | None = None, extractor: FeatureExtractor | None = None) -> None:
        import torch

        from egomem.memory.trigger.model import TriggerNet

        path = Path(weights) if weights is not None else WEIGHTS
        if not path.is_file():
            raise InputError(f"episodic trigger weights not found: {path}")
        blob = torch.load(path, map_location="cpu", weights_only=True)
        self.net = TriggerNet(**blob["config"])
        self.net.load_state_dict(blob["state"])
        self.net.eval()
        self.mean = np.asarray(blob["mean"], dtype=np.float32)
        self.std = np.asarray(blob["std"], dtype=np.float32)
        self.start_penalty = float(blob.get("start_penalty", 0.0))
        self._extractor = extractor

    @classmethod
    def from_config(cls, cfg: ProviderConfig, ctx: BuildContext) -> EpisodicTrigger:
        """The `model` trigger provider: the shipped weights."""
        return cls()

    @property
    def extractor(self) -> FeatureExtractor:
        if self._extractor is None:
            self._extractor = FeatureExtractor.default()
        return self._extractor

    def tag(self, listen16k: np.ndarray, speak16k: np.ndarray, vad: KnownVAD | None = None) -> np.ndarray:
        """Labels (int8, one per 80 ms step) for the two 16 kHz mono channels (`vad`: the
        listening channel's VAD when already computed)."""
        return self.tag_features(self.extractor(listen16k, speak16k, vad))

    def tag_features(self, feats: np.ndarray) -> np.ndarray:
        return viterbi(np.log(np.maximum(self.posteriors(feats), 1e-9)), self.start_penalty)

    def posteriors(self, feats: np.ndarray) -> np.ndarray:
        """(steps, 4) label probabilities, chunk-wise with overlapping margins."""
        import torch

        f = np.asarray(feats, dtype=np.float32)
        if f.ndim != 2 or f.shape[1] != N_FEATURES:
            raise InputError(f"features must be (steps, {N_FEATURES}), got shape {f.shape}")
        steps = f.shape[0]
        out = np.zeros((steps, 4), dtype=np.float32)
        x = (f - self.mean) / self.std
        with torch_single_thread():
            self._chunks(x, out, torch)
        return out

    def _chunks(self, x: np.ndarray, out: np.ndarray, torch: Any) -> None:
        steps = x.shape[0]
        core = CHUNK_STEPS - 2 * MARGIN_STEPS
        for a in range(0, steps, core):
            lo, hi = max(0, a - MARGIN_STEPS), min(steps, a + core + MARGIN_STEPS)
            if steps <= CHUNK_STEPS:
                lo, hi = 0, steps
            with torch.no_grad():
                logits = self.net(torch.from_numpy(x[lo:hi])[None])[0]
            probs = torch.softmax(logits, dim=-1).numpy()
            b = min(steps, a + core) if steps > CHUNK_STEPS else steps
            out[a:b] = probs[a - lo : b - lo]
            if steps <= CHUNK_STEPS:
                break
