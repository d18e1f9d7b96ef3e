"""The training code (egomem_training, outside the runtime package) still imports, runs
from `python -m`, and calibrates the rule baseline on a real two-session stream."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from egomem.memory.trigger.features import FeatureExtractor
from egomem.memory.trigger.metrics import labels_from_sessions
from egomem_eval.trigger.dataset import Example
from egomem_training.trigger import calibrate_rules, score
from egomem_training.voice_cohort import _rttm_turns


@pytest.mark.parametrize("module", ["trigger", "voice_threshold", "voice_cohort"])
def test_runnable_with_python_m(module: str) -> None:
    r = subprocess.run([sys.executable, "-m", f"egomem_training.{module}", "--help"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "--data" in r.stdout


def test_rule_calibration_finds_the_sessions_of_a_real_stream(dialog_stream: Any) -> None:
    feats = FeatureExtractor.default()(dialog_stream.listen, dialog_stream.speak)
    spans = dialog_stream.sessions
    ex = Example(feats, labels_from_sessions(spans, feats.shape[0]), spans, noised=False, seed=0)
    rules, figures = calibrate_rules([ex])
    assert set(figures) == {"jaccard", "f1_at_5"}
    assert figures == score([rules.sessions(feats)], [ex])
    assert figures["jaccard"] > 0.5 and len(rules.sessions(feats)) == len(spans)


def test_cohort_builder_reads_rttm_turns(tmp_path: Path) -> None:
    rttm = tmp_path / "m.rttm"
    rttm.write_text(
        "SPEAKER m1 1 0.50 1.25 <NA> <NA> spk_a <NA> <NA>\nnot a speaker line\n"
        "SPEAKER m1 1 2.00 0.50 <NA> <NA> spk_b <NA> <NA>\n"
    )
    turns = _rttm_turns(rttm)
    assert [(u, s) for u, s, _, _ in turns] == [("m1", "spk_a"), ("m1", "spk_b")]
    assert np.allclose([(a, b) for *_, a, b in turns], [(0.5, 1.75), (2.0, 2.5)])
