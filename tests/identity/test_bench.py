"""The three benchmarks run end to end with --quick on the tiny samples in tests/data."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from egomem.bench import BenchOptions, render, run_bench
from egomem.bench._speaker_eval import spread

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


@pytest.mark.slow  # the short-segment and FSDD protocols too: minutes on 2 cores
def test_bench_speaker_quick(tmp_path: Path) -> None:
    out = tmp_path / "spk.json"
    extra = {"eval": "eval", "distractors": "distract", "enroll": "1", "parts": "long,short"}
    r = run_bench("speaker", BenchOptions(data=DATA / "speech", json_path=out, quick=True, extra=extra))
    m = json.loads(out.read_text())["metrics"]
    assert m["eval_set"] == "eval" and m["clean"]["queries"] == 4 and m["enrolled_users"] == 3
    for cohort in ("raw", "fixed_cohort", "gallery_cohort"):
        assert m["clean"][cohort]["pass_at_1"] == 1.0 and 0.0 <= m["clean"][cohort]["eer"] <= 1.0
    snr = m["snr10"]
    assert snr["seeds"] == [0, 1] and len(snr["draws"]) == 2  # --quick: two noise draws
    for stat in ("mean", "min", "max"):
        assert 0.0 <= snr["fixed_cohort"][f"pass_at_1_{stat}"] <= 1.0
    p = [d["gallery_cohort"]["pass_at_1"] for d in snr["draws"]]
    assert snr["gallery_cohort"]["pass_at_1_min"] == min(p) and snr["gallery_cohort"]["pass_at_1_max"] == max(p)
    # Short pieces of the same clips: both splits, in length bins.
    assert set(m["short"]) | set(m["short_dev"]) <= {"0_3_0_5", "0_5_1_0", "1_0_1_5", "0_5_1_5"}
    assert m["short"] or m["short_dev"]
    assert "gallery p@1" in render(r)


def test_speaker_spread_is_mean_min_max_per_metric() -> None:
    draws = [{"n": 4, "c": {"p": 0.5, "e": 0.1}}, {"n": 4, "c": {"p": 1.0, "e": 0.3}}]
    s = spread(draws)
    assert s["n"] == 4
    assert s["c"] == pytest.approx(
        {"p_mean": 0.75, "p_min": 0.5, "p_max": 1.0, "e_mean": 0.2, "e_min": 0.1, "e_max": 0.3}
    )


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
