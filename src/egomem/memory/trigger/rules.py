"""The rule-based baseline trigger: VAD + gaps + speaker change, on the same features.

User speech is the listening channel's VAD while the assistant is silent (so echo is
not taken for the user); a session is a run of user and assistant activity whose gaps
are shorter than `gap_s`, that has both user speech and an assistant reply (addressed
dialog), split where the speaker embedding changes across a user-speech gap by more
than `change`. Its two thresholds are calibrated on the training streams (egomem_training.trigger).
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from egomem.errors import InputError
from egomem.memory.trigger.features import FEATURE_NAMES, N_FEATURES, STEP_S, FeatureExtractor, KnownVAD
from egomem.memory.trigger.metrics import Span, labels_from_sessions
from egomem.providers import BuildContext
from egomem.registry import ProviderConfig

_COL = {n: i for i, n in enumerate(FEATURE_NAMES)}
RULES_FILE = Path(__file__).parent / "weights" / "rules.json"  # thresholds calibrated by egomem_training.trigger


def _runs(mask: np.ndarray) -> list[Span]:
    """(first, last) index of each run of True."""
    d = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(d == 1).tolist(), (np.flatnonzero(d == -1) - 1).tolist(), strict=True))


@dataclass(frozen=True)
class RuleTrigger:
    gap_s: float = 2.0
    change: float = 0.5
    vad: float = 0.5

    @classmethod
    def calibrated(cls) -> RuleTrigger:
        """The thresholds egomem_training.trigger calibrated on the training streams (defaults if absent)."""
        if not RULES_FILE.is_file():
            return cls()
        p = json.loads(RULES_FILE.read_text())
        return cls(gap_s=float(p["gap_s"]), change=float(p["change"]), vad=float(p["vad"]))

    def sessions(self, feats: np.ndarray) -> list[Span]:
        f = np.asarray(feats, dtype=np.float32)
        if f.ndim != 2 or f.shape[1] != N_FEATURES:
            raise InputError(f"features must be (steps, {N_FEATURES}), got shape {f.shape}")
        assistant = f[:, _COL["speak_active"]] > 0.5
        user = (f[:, _COL["listen_vad_mean"]] > self.vad) & ~assistant
        active = user | assistant
        gap = round(self.gap_s / STEP_S)
        regions: list[list[int]] = []
        for a, b in _runs(active):
            if regions and a - regions[-1][1] - 1 < gap:
                regions[-1][1] = b
            else:
                regions.append([a, b])
        out: list[Span] = []
        for a, b in regions:
            if not (user[a : b + 1].any() and assistant[a : b + 1].any()):
                continue  # nobody answered: not addressed dialog
            turns = [(a + s, a + e) for s, e in _runs(user[a : b + 1])]
            start = turns[0][0]
            for (_, e0), (s1, _) in itertools.pairwise(turns):
                mid = (e0 + s1) // 2
                if f[mid, _COL["spk_change_3"]] > self.change:
                    last = s1 - 1 - int(np.argmax(active[start:s1][::-1]))
                    out.append((start, last))
                    start = s1
            out.append((start, b))
        return out

    def tag_features(self, feats: np.ndarray) -> np.ndarray:
        return labels_from_sessions(self.sessions(feats), int(np.asarray(feats).shape[0]))


class StreamRuleTrigger:
    """The `rules` trigger provider: the calibrated rule baseline with the agent's
    `tag(listen16k, speak16k)` (it computes the features the rules read)."""

    def __init__(self, rules: RuleTrigger | None = None, extractor: FeatureExtractor | None = None) -> None:
        self.rules = rules or RuleTrigger.calibrated()
        self._extractor = extractor

    @classmethod
    def from_config(cls, cfg: ProviderConfig, ctx: BuildContext) -> StreamRuleTrigger:
        return cls()

    def tag(self, listen16k: np.ndarray, speak16k: np.ndarray, vad: KnownVAD | None = None) -> np.ndarray:
        if self._extractor is None:
            self._extractor = FeatureExtractor.default()
        return self.rules.tag_features(self._extractor(listen16k, speak16k, vad))
