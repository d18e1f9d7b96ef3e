"""Whisper's repetition guard: the repeated-phrase detector and loop collapse (strings), and which decode
the guard keeps (with a scripted stand-in for faster-whisper's model)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from egomem.perception.asr import collapse_repeats, collapsed_indices, longest_repeat, repeat_keys


def keys(text: str) -> list[str]:
    return repeat_keys(text.split())


def test_longest_repeat_counts_back_to_back_phrases_whatever_the_case_and_punctuation() -> None:
    assert longest_repeat(keys("")) == 0
    assert longest_repeat(keys("serve in a chafing dish with thin slices of dry toast")) == 1
    assert longest_repeat(keys("yeah, yeah, yeah.")) == 3
    assert longest_repeat(keys("So, No, I didn't, no, I didn't, no I didn't. NO, I didn't? Fine")) == 4
    # a whole 9-word sentence looping is a loop too; phrases longer than max_words are not looked for
    loop9 = "I don't know what to do, but " * 5
    assert longest_repeat(keys(loop9)) == 5
    assert longest_repeat(keys(loop9), max_words=6) == 1
    # not back to back: the same phrase with other words between is not a repeat
    assert longest_repeat(keys("I think so and I think so and then I think so")) == 2


def test_collapse_cuts_a_loop_to_its_first_copy_and_keeps_the_rest() -> None:
    loop = "Okay, okay, two zero, two zero, two zero, two zero, two zero, two zero, see you."
    assert collapse_repeats(loop) == "Okay, okay, two zero, see you."
    assert collapse_repeats("yeah " * 56 + "right") == "yeah right"
    interview = "Well, " + "no, I didn't, " * 40 + "you did."
    assert collapse_repeats(interview) == "Well, no, I didn't, you did."
    # what people do say is left alone: up to `limit` copies, and any text without a run
    assert collapse_repeats("Yeah, yeah, yeah. No no no.") == "Yeah, yeah, yeah. No no no."
    assert collapse_repeats("Yeah, yeah, yeah, yeah.", limit=4) == "Yeah, yeah, yeah, yeah."
    assert collapse_repeats("") == ""


def test_collapse_leaves_no_run_longer_than_the_limit() -> None:
    text = "a b a b a b a b a b c c c c c d e f d e f d e f d e f g"
    out = collapse_repeats(text)
    assert out == "a b c d e f g"
    assert longest_repeat(keys(out)) <= 3


def test_collapsed_indices_keep_punctuation_only_tokens_and_never_break_a_run_on_them() -> None:
    tokens = ["go", "-", "go", "go", "go", "now"]
    assert collapsed_indices(repeat_keys(tokens)) == [0, 1, 5]  # "go" x4 across the "-": one copy


# -- the guard's decision, with a stand-in for faster-whisper's model (plumbing only: what it returns
# -- per repetition penalty is written here, so the test checks which decode is kept and why) --------
class _Segment:
    def __init__(self, text: str, ratio: float = 1.0) -> None:
        self.text, self.compression_ratio, self.words = text, ratio, None


class _ScriptedModel:
    """Stands in for WhisperModel: the text for each repetition penalty, and the calls it got."""

    def __init__(self, by_penalty: dict[float, _Segment]) -> None:
        self.by_penalty = by_penalty
        self.calls: list[dict[str, object]] = []

    def transcribe(self, audio: object, **kw: object) -> tuple[list[_Segment], None]:
        self.calls.append(kw)
        return [self.by_penalty[float(kw["repetition_penalty"])]], None  # type: ignore[arg-type]


def _guarded(
    monkeypatch: pytest.MonkeyPatch, by_penalty: dict[float, _Segment], **kw: object
) -> tuple[str, _ScriptedModel]:
    import egomem.perception.whisper as whisper

    model = _ScriptedModel(by_penalty)
    monkeypatch.setattr(whisper, "resolve_model_dir", lambda name, data_dir=None: Path("."))
    monkeypatch.setattr(whisper, "_load", lambda *a: model)
    asr = whisper.FasterWhisperASR("base", **kw)  # type: ignore[arg-type]
    return asr.transcribe_cased(np.full(16000, 0.1, np.float32)), model


LOOP = "No, I didn't, " * 20


def test_a_clean_decode_is_decoded_once_without_conditioning(monkeypatch: pytest.MonkeyPatch) -> None:
    text, model = _guarded(monkeypatch, {1.0: _Segment("Hello there.")})
    assert text == "Hello there." and len(model.calls) == 1
    assert model.calls[0]["condition_on_previous_text"] is False and model.calls[0]["temperature"] == 0.0


def test_a_loop_is_decoded_again_with_the_penalty_and_the_retry_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    text, model = _guarded(monkeypatch, {1.0: _Segment(LOOP), 1.1: _Segment("No, I didn't. You did.")})
    assert text == "No, I didn't. You did."
    assert [c["repetition_penalty"] for c in model.calls] == [1.0, 1.1]


def test_a_window_that_compresses_too_well_is_retried_too(monkeypatch: pytest.MonkeyPatch) -> None:
    text, model = _guarded(monkeypatch, {1.0: _Segment("Go on.", ratio=3.0), 1.1: _Segment("Go on then.")})
    assert text == "Go on then." and len(model.calls) == 2


def test_a_loop_that_survives_the_retry_is_cut_to_one_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    worse = _Segment("Well, " + LOOP + LOOP)
    text, model = _guarded(monkeypatch, {1.0: worse, 1.1: _Segment("Well, " + LOOP)})
    assert text == "Well, No, I didn't," and len(model.calls) == 2


def test_with_the_guard_off_the_decode_is_whispers_own(monkeypatch: pytest.MonkeyPatch) -> None:
    text, model = _guarded(monkeypatch, {1.0: _Segment(LOOP)}, loop_guard=False)
    assert text == LOOP.strip() and len(model.calls) == 1
    assert model.calls[0]["condition_on_previous_text"] is True
