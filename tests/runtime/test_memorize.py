"""`egomem memorize`: clips, resume, and bad recordings."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from egomem.config import load_config
from egomem.errors import InputError
from egomem.runtime.build import Models
from egomem.runtime.memorize import ClipDone, Memorizer, Progress, clip_spans
from egomem.store.sqlite import SQLiteStore
from egomem.stream.sources import read_clip, read_recording

DEMO = Path(__file__).parents[2] / "src/egomem/runtime/demo_assets/day1.mp4"


def test_clip_spans_cover_the_recording() -> None:
    assert clip_spans(65.0, 30.0) == [(0.0, 30.0), (30.0, 60.0), (60.0, 65.0)]
    assert clip_spans(60.5, 30.0) == [(0.0, 30.0), (30.0, 60.5)]  # no clip under a second
    assert clip_spans(0.0, 30.0) == []
    with pytest.raises(InputError, match="positive"):
        clip_spans(10.0, 0.0)


def test_a_clip_is_the_same_audio_and_frames_as_the_whole_recording() -> None:
    whole = read_recording(DEMO)
    clip = read_clip(DEMO, 20.0, 30.0)
    assert clip.duration_s == 10.0 and clip.listen.size == 160_000
    assert np.allclose(clip.listen, whole.listen[320_000:480_000], atol=1e-4)
    # Frames keep 2 per second, timed from the clip's start.
    assert len(clip.frames) == 20 and clip.frames[0].t == pytest.approx(0.0, abs=0.05)
    same = [f for f in whole.frames if 20.0 <= f.t < 30.0]
    assert np.array_equal(clip.frames[3].image, same[3].image)


def _memorizer(tmp_path: Path, clip_s: float) -> tuple[Memorizer, SQLiteStore]:
    cfg = load_config(data_dir=tmp_path, environ={"EGOMEM_LLM__PROVIDER": "rules"})
    store = SQLiteStore(tmp_path / "memory.db")
    return Memorizer(cfg, store, Models(cfg), clip_s=clip_s), store


def test_stopped_run_resumes_without_redoing_clips(tmp_path: Path) -> None:
    wav = tmp_path / "quiet.wav"
    sf.write(str(wav), np.zeros(16_000 * 5, np.float32), 16_000)  # 5 s of silence: nothing to remember
    memorizer, store = _memorizer(tmp_path, 2.0)
    seen: list[int] = []

    def on_clip(prog: Progress, clip: ClipDone | None) -> None:
        if clip is not None:
            seen.append(clip.index)

    try:
        first = memorizer.run(wav, origin=0.0, on_clip=on_clip, should_stop=lambda: len(seen) >= 1)
        assert [c.index for c in first.clips] == [0]
        assert memorizer.progress_file(first.recording).is_file()
        again = memorizer.run(wav, on_clip=on_clip)
        assert seen == [0, 1, 2]  # clip 0 is not done again
        assert [(c.start_s, c.end_s) for c in again.clips] == [(0.0, 2.0), (2.0, 4.0), (4.0, 5.0)]
        assert again.origin == 0.0  # the first run's origin stands
        assert store.list_users() == [] and store.list_episodes() == []
        other, _ = _memorizer(tmp_path, 3.0)
        with pytest.raises(InputError, match="resume with --clip 2"):
            other.run(wav)
    finally:
        store.close()


def test_a_corrupt_recording_is_a_clear_error_and_writes_nothing(tmp_path: Path) -> None:
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"not a video" * 50)
    memorizer, store = _memorizer(tmp_path, 30.0)
    try:
        with pytest.raises(InputError, match=r"junk\.mp4"):
            memorizer.run(junk)
        with pytest.raises(InputError, match="not found"):
            memorizer.run(tmp_path / "missing.mp4")
        assert store.list_users() == [] and store.list_episodes() == []
    finally:
        store.close()


@pytest.mark.slow
def test_an_interrupted_and_resumed_run_remembers_what_an_uninterrupted_one_does(tmp_path: Path) -> None:
    def memory(store: SQLiteStore) -> list[tuple[str, list[str]]]:
        return sorted(
            (u.name or "", sorted(f.text for f in store.list_facts(u.id)))
            for u in store.list_users(include_placeholders=False)
        )

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    whole, store_a = _memorizer(tmp_path / "a", 20.0)
    parts, store_b = _memorizer(tmp_path / "b", 20.0)
    try:
        whole.run(DEMO, origin=1e9)
        done: list[int] = []
        parts.run(DEMO, origin=1e9, on_clip=lambda p, c: done.append(1) if c else None, should_stop=lambda: bool(done))
        parts.run(DEMO)
        assert memory(store_a) == memory(store_b)
        assert any(name == "Emily" for name, _ in memory(store_a))
    finally:
        store_a.close()
        store_b.close()
