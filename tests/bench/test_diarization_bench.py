"""`egomem bench diarization` loaders and scoring, without models (small synthetic references)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from egomem.bench.diarization import Item, load_items, overlap_floor, read_segments, score
from egomem.errors import InputError
from egomem.perception.diarization import Diarization, Turn


def _wav(path: Path, seconds: float = 4.0) -> None:
    sf.write(path, np.zeros(int(seconds * 16000), np.float32), 16000)


def test_folder_of_rttm_and_segments(tmp_path: Path) -> None:
    _wav(tmp_path / "a.wav")
    (tmp_path / "a.rttm").write_text(
        "SPEAKER a 1 0.0 2.0 <NA> <NA> ann <NA> <NA>\nSPEAKER a 1 1.5 2.5 <NA> <NA> ben <NA> <NA>\n"
    )
    (tmp_path / "a.uem").write_text("a NA 0.0 4.0\n")
    _wav(tmp_path / "b.wav")
    (tmp_path / "b.segments").write_text("0\t1.5\tspeakerA\n1.5\t4\tspeakerB\n")
    _wav(tmp_path / "c.wav")  # no reference: skipped
    items = {i.uri: i for i in load_items(tmp_path)}
    assert set(items) == {"a", "b"}
    assert items["a"].turns == [(0.0, 2.0, "ann"), (1.5, 4.0, "ben")] and items["a"].uem == [(0.0, 4.0)]
    assert items["b"].turns == read_segments(tmp_path / "b.segments") and items["b"].uem is None
    # 0.5 s of two speakers over 4.5 s of reference speech.
    assert overlap_floor([items["a"]], {"a": 4.0}) == pytest.approx(0.5 / 4.5, abs=0.01)


def test_pyannote_debug_layout(shared_data) -> None:
    items = load_items(shared_data("speech_pyannote_diarization"))
    splits = [i.split for i in items]
    assert splits.count("trn") == 10 and splits.count("heldout") == 4
    assert all(i.wav.is_file() and i.uem == [(0.0, 30.0)] for i in items)


def test_empty_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no diarization references"):
        load_items(tmp_path)


def test_score_perfect_and_single_speaker() -> None:
    item = Item("x", Path("x.wav"), [(0.0, 2.0, "ann"), (2.0, 4.0, "ben")], [(0.0, 4.0)])
    perfect = Diarization([Turn(0.0, 2.0, 0), Turn(2.0, 4.0, 1)], np.zeros((2, 256), np.float32))
    one = Diarization([Turn(0.0, 4.0, 0)], np.zeros((1, 256), np.float32))
    m = score([item], {"x": perfect}, {"x": 4.0})
    assert m["der"] == pytest.approx(0.0) and m["count_exact"] == 1.0
    m = score([item], {"x": one}, {"x": 4.0})
    assert m["der"] == pytest.approx(0.5) and m["count_exact"] == 0.0
    # ±0.25 s collar removes 0.5 s around the change from scoring: 1.75 s confused of 3.5 s.
    assert m["der_collar_0_25"] == pytest.approx(1.75 / 3.5)
