"""The repeated-phrase detector and the loop collapse behind Whisper's repetition guard (strings only)."""

from __future__ import annotations

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
