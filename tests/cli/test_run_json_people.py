"""`egomem run --people --json`: the people analysis goes into the JSON as well as the listing."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.mark.slow
def test_run_json_holds_the_people_report(tmp_path: Path, shared_data: Callable[[str], Path]) -> None:
    clip = shared_data("av_hamilton_clip") / "short_hamilton_clip.mp4"
    out = tmp_path / "run.json"
    args = ["run", str(clip), "--quiet", "--people", "--json", str(out)]
    r = subprocess.run(
        [sys.executable, "-m", "egomem.cli.main", "--data-dir", str(tmp_path), *args],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, r.stderr
    data = json.loads(out.read_text())
    people = data["people"]
    assert people["tracks"] and {"links", "voices", "abstentions"} <= set(people)
    listing = r.stdout.split("people seen and heard:", 1)[1]
    assert f"{len(people['tracks'])} face track" in listing  # the same report as printed
    # Piped, the long phases say what they do: each model loaded, then each tenth of the recording.
    stamp = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d run: "
    err = r.stderr.splitlines()
    assert any(re.match(stamp + r"loaded speech recognition \(.+\) in \d+\.\d s$", ln) for ln in err), r.stderr
    assert any(re.match(stamp + r"50% of the recording processed", ln) for ln in err), r.stderr
