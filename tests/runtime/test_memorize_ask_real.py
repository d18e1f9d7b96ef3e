"""`egomem memorize` then `egomem ask` on real third-party recordings (av_hamilton_clip,
visualvoice_interview), through the CLI with the rules backend (no LLM).

What is asserted is the defined behaviour, not content: the recording is memorised (one
clip, an episode with its transcript), a question about what was said is answered from
evidence that names its episode and time, the answer says it is the best evidence itself,
and a question about someone memory does not hold is "I have nothing about ...".
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest


@pytest.mark.slow
@pytest.mark.parametrize(
    ("folder", "name", "seconds"),
    [("av_hamilton_clip", "short_hamilton_clip.mp4", 10.0), ("visualvoice_interview", "interview.mp4", 17.5)],
)
def test_memorize_then_ask_on_a_real_recording(
    folder: str,
    name: str,
    seconds: float,
    tmp_path: Path,
    shared_data: Callable[[str], Path],
    egomem: Callable[..., CompletedProcess[str]],
) -> None:
    clip = shared_data(folder) / name
    report = tmp_path / "memorize.json"
    r = egomem("memorize", str(clip), "--json", str(report), data_dir=tmp_path)
    assert r.returncode == 0, r.stderr
    done = json.loads(report.read_text())
    assert done["duration_s"] == pytest.approx(seconds, abs=0.6)
    assert [c["index"] for c in done["clips"]] == [0] and not done["clips"][0]["failed_sessions"]

    r = egomem("ask", "What did they say?", "--no-llm", "--json", data_dir=tmp_path)
    assert r.returncode == 0, r.stderr
    answer = json.loads(r.stdout)
    if answer["empty"]:  # nothing recognisable was said: the defined empty answer
        assert answer["answer"].startswith("I have nothing about") and answer["evidence"] == []
    else:
        assert answer["answered_by"] == "evidence" and answer["answer"].startswith("No language model answered")
        best = answer["evidence"][0]
        assert best["quote"] and best["episode_id"] and best["time_text"]
        assert best["quote"] in answer["answer"]

    r = egomem("ask", "Where does Zorblax live?", "--no-llm", "--json", data_dir=tmp_path)
    assert r.returncode == 0, r.stderr
    unknown = json.loads(r.stdout)
    assert unknown["empty"] and unknown["answer"] == "I have nothing about Zorblax." and unknown["evidence"] == []

    # Memorising again resumes: the clip is done, memory is unchanged.
    before = json.loads(egomem("ask", "What did they say?", "--no-llm", "--json", data_dir=tmp_path).stdout)
    r = egomem("memorize", str(clip), data_dir=tmp_path)
    assert r.returncode == 0, r.stderr
    after = json.loads(egomem("ask", "What did they say?", "--no-llm", "--json", data_dir=tmp_path).stdout)
    assert after["evidence"] == before["evidence"]
