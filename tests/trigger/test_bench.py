"""`egomem bench trigger --quick` end to end on a tiny held-out set."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner

from egomem.cli.main import cli


def test_bench_trigger_quick(tmp_path: Path, shared_data: Callable[[str], Path]) -> None:
    data = shared_data("speech_librispeech_test_other_10spk").parent
    out = tmp_path / "trigger.json"
    res = CliRunner().invoke(cli, ["bench", "trigger", "--quick", "--data", str(data), "--json", str(out)])
    assert res.exit_code == 0, res.output
    m = json.loads(out.read_text())["metrics"]
    for tagger in ("model", "baseline"):
        for cond in ("clean", "noised"):
            row = m[tagger][cond]
            for key in ("jaccard", "f1_at_0", "f1_at_5", "f1_at_10", "precision_at_5", "recall_at_5"):
                assert 0.0 <= row[key] <= 1.0
            assert row["f1_at_0"] <= row["f1_at_5"] <= row["f1_at_10"]
    assert m["seconds_per_8192_steps"] > 0 and m["streams"] == 2
    # The trained model must at least find sessions on clean held-out speech.
    assert m["model"]["clean"]["jaccard"] > 0.5
    assert "episodic trigger" in res.output
