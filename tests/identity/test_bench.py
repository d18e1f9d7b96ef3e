"""The three benchmarks run end to end with --quick on the tiny samples in tests/data."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from egomem.bench import BenchOptions, render, run_bench

DATA = Path(__file__).resolve().parents[1] / "data"


def test_bench_face_quick(tmp_path: Path) -> None:
    out = tmp_path / "face.json"
    r = run_bench("face", BenchOptions(data=DATA, json_path=out, quick=True, extra={"sets": "faces"}))
    m = json.loads(out.read_text())["metrics"]["faces"]
    assert m["pairs"] == 6 and m["same_pairs"] == 2 and m["no_face_images"] == 0
    assert m["accuracy"] == 1.0 and m["auc"] == 1.0
    assert r.metrics["search"]["10000"]["exact_ms_p50"] > 0
    assert "face verification" in render(r)


def test_bench_face_labels_file_rules_and_multi_face_photos_are_not_pairs(tmp_path: Path) -> None:
    # Folder names say two people; the labels file says who is who, and one photo shows two.
    root = tmp_path / "faces_labelled"
    for person in ("Colin_Powell", "Ariel_Sharon"):
        shutil.copytree(DATA / "faces" / person, root / person)
    rows = ["file,identity", "Colin_Powell/Colin_Powell_0001.jpg,P1", "Colin_Powell/Colin_Powell_0002.jpg,P1"]
    rows += ["Ariel_Sharon/Ariel_Sharon_0001.jpg,P2", "Ariel_Sharon/Ariel_Sharon_0002.jpg,P1|P2"]
    (root / "labels.csv").write_text("\n".join(rows) + "\n")
    opts = BenchOptions(data=tmp_path, quick=True, extra={"sets": "faces_labelled", "timing": "off"})
    m = run_bench("face", opts).metrics["faces_labelled"]
    assert m["images"] == 3 and m["pairs"] == 3 and m["same_pairs"] == 1
    assert m["multi_face_images_excluded"] == 1
    assert m["cpu_ms_p50"] > 0 and m["latency_ms_p50"] > 0


def test_bench_speaker_quick(tmp_path: Path) -> None:
    out = tmp_path / "spk.json"
    extra = {"eval": "eval", "distractors": "distract", "enroll": "1"}
    r = run_bench("speaker", BenchOptions(data=DATA / "speech", json_path=out, quick=True, extra=extra))
    m = json.loads(out.read_text())["metrics"]["eval"]
    assert m["queries"] == 4 and m["enrolled_users"] == 3
    assert m["pass_at_1"] == 1.0 and 0.0 <= m["eer"] <= 1.0
    assert set(m["snr_10db"]) >= {"pass_at_1", "pass_at_1_snorm", "eer"}
    assert "pass@1_snorm" in render(r)


def test_bench_asr_quick(tmp_path: Path) -> None:
    out = tmp_path / "asr.json"
    r = run_bench("asr", BenchOptions(data=DATA / "speech" / "eval", json_path=out, quick=True))
    m = json.loads(out.read_text())["metrics"]
    assert m["dataset"] == "eval" and m["utterances"] == 6  # the whole sample (--quick takes up to 10)
    # Every installed backend side by side (make install installs both Whisper models).
    assert {"whisper-base", "whisper-tiny.en", "pocketsphinx"} <= set(m), r.notes
    for label in ("whisper-base", "whisper-tiny.en", "pocketsphinx"):
        b = m[label]
        assert b["utterances"] == 6 and 0.0 <= b["wer"] <= 1.5 and b["rtf"] > 0 and b["cpu_s"] > 0
    assert m["whisper-base"]["model"] == "base" and m["whisper-base"]["provider"] == "faster-whisper"
    assert m["whisper-base"]["wer"] < m["pocketsphinx"]["wer"]
