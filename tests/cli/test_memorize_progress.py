"""`egomem memorize` piped: timestamped step lines, a resumed run says where it resumed, and the
summary names the clip length (not the recording's)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import soundfile as sf

from egomem.config import load_config
from egomem.runtime.build import Models
from egomem.runtime.memorize import ClipDone, Memorizer, Progress
from egomem.store.sqlite import SQLiteStore

STAMP = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d memorize: "


def _egomem(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "egomem.cli.main", "--data-dir", str(tmp_path), *args],
        capture_output=True,  # stderr is a pipe: not a terminal
        text=True,
        timeout=600,
        env={**os.environ, "EGOMEM_LLM__PROVIDER": "rules", "HF_HUB_OFFLINE": "1"},
    )


def test_piped_memorize_resumes_and_says_where(tmp_path: Path) -> None:
    wav = tmp_path / "quiet.wav"
    sf.write(str(wav), np.zeros(16_000 * 6, np.float32), 16_000)  # 6 s: three 2 s clips
    cfg = load_config(data_dir=tmp_path, environ={"EGOMEM_LLM__PROVIDER": "rules"})
    store = SQLiteStore(tmp_path / "memory.db")
    done: list[int] = []

    def on_clip(prog: Progress, clip: ClipDone | None) -> None:
        if clip is not None:
            done.append(clip.index)

    try:  # a first run stopped after one clip
        Memorizer(cfg, store, Models(cfg), clip_s=2.0).run(
            wav, origin=0.0, on_clip=on_clip, should_stop=lambda: bool(done)
        )
    finally:
        store.close()
    r = _egomem(tmp_path, "memorize", str(wav), "--clip", "2")
    assert r.returncode == 0, r.stderr
    lines = r.stderr.strip().splitlines()
    assert re.match(STAMP + r"resuming quiet\.wav at clip 2 of 3 \(2 s\): 1 clip\(s\) memorised before$", lines[0])
    clips = [ln for ln in lines if re.match(STAMP + r"clip \d of 3 \(\d-\d s\) done in", ln)]
    assert [c.split("clip ")[1][0] for c in clips] == ["2", "3"]  # one line per clip this run did
    assert "3 of 3 clip(s) of 2 s memorised (6 s recording)" in r.stdout
    # Again: nothing left, said in one line.
    r = _egomem(tmp_path, "memorize", str(wav), "--clip", "2")
    assert r.returncode == 0 and r.stderr.strip() == "quiet.wav: all 3 clip(s) memorised already; nothing to do"
