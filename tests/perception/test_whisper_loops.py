"""Whisper's repetition guard on a real recording that loops: the split-screen TV interview of
../shared/data/visualvoice_interview (two people talking over each other). Unguarded, Whisper base
gives one line of "No, I didn't, no, I didn't, ..." (37 copies) and loses the rest."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from egomem.errors import ConfigError
from egomem.perception.asr import longest_repeat, normalise_text, repeat_keys
from egomem.perception.whisper import FasterWhisperASR
from egomem.stream.sources import read_recording


def _asr(**settings: object) -> FasterWhisperASR:
    try:
        return FasterWhisperASR("base", **settings)  # type: ignore[arg-type]
    except ConfigError as exc:
        pytest.skip(f"Whisper base is not installed: {exc}")


def test_the_interview_does_not_loop(shared_data: Callable[[str], Path]) -> None:
    audio = read_recording(shared_data("visualvoice_interview") / "interview.mp4").listen
    text = _asr().transcribe_cased(audio)
    words = normalise_text(text).split()
    # bench real's max_rep (phrases of 1-6 words) and the guard's own (1-12 words): at most 3 in a row
    assert longest_repeat(repeat_keys(text.split()), max_words=6) <= 3, text
    assert longest_repeat(repeat_keys(text.split())) <= 3, text
    # and the rest of the interview is heard, not just the loop's four words
    assert len(set(words)) >= 15, text


def test_the_guard_off_is_the_plain_decode(shared_data: Callable[[str], Path]) -> None:
    # What the guard is for: without it the same audio loops (if Whisper ever stops looping here,
    # this test says so rather than the guard test passing for nothing).
    audio = read_recording(shared_data("visualvoice_interview") / "interview.mp4").listen
    text = _asr(loop_guard=False).transcribe_cased(audio)
    assert longest_repeat(repeat_keys(text.split()), max_words=6) > 3, text


_TRANSCRIBE = """
import sys
from egomem.perception.whisper import FasterWhisperASR
from egomem.stream.sources import read_recording
print(FasterWhisperASR("base").transcribe_cased(read_recording(sys.argv[1]).listen))
"""


@pytest.mark.slow
def test_the_guarded_transcript_is_the_same_in_two_processes(shared_data: Callable[[str], Path]) -> None:
    path = str(shared_data("visualvoice_interview") / "interview.mp4")
    _asr()  # skip where the model is absent
    runs = [
        subprocess.run([sys.executable, "-c", _TRANSCRIBE, path], capture_output=True, text=True, check=True).stdout
        for _ in range(2)
    ]
    assert runs[0] == runs[1] and runs[0].strip()
