"""One voice has one name: sentences of one utterance that give two people's own names hold two speakers."""

from __future__ import annotations

import pytest

from egomem.memory.rules_extract import several_people_named

# The phone call of bench real as Whisper wrote it: both callers in one VAD turn, no split between them.
CALL = (
    "Hello, I didn't know you were there. Neither did I. This is Diane and New Jersey. "
    "And I'm Sheila and Texas originally from Chicago. Oh, I'm originally from Chicago also."
)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        (CALL, ["Diane", "Sheila"]),
        ("i'm tom. hello i'm lisa", ["Tom", "Lisa"]),  # lower-case ASR text: names from the lexicon
        ("My name is Ruth. Hi Ruth, I'm Oscar.", ["Ruth", "Oscar"]),
    ],
)
def test_two_own_names_in_one_utterance_are_two_people(text: str, names: list[str]) -> None:
    assert several_people_named(text) == names


@pytest.mark.parametrize(
    "text",
    [
        "Hi, I'm Anna. My name is Anna Smith.",  # one name in two forms
        "I'm Sam. Well, I'm Samantha really.",  # a short form
        "My name is Robert. Call me Bob.",  # a nickname is no second person
        "This is Anna. This is Ben.",  # one speaker may introduce two others
        "Hi, this is Ben, and I'm Anna.",  # one sentence: one speaker introducing a companion and herself
        "I'm tired. I'm Anna.",  # one name
        "I'm Anna. Is that Ben over there?",  # a question gives no name
        "",
    ],
)
def test_one_speakers_utterance_is_not_flagged(text: str) -> None:
    assert several_people_named(text) == []


def test_a_known_name_counts_in_lower_case_text() -> None:
    assert several_people_named("i'm zebedee. and i'm quentin", known=["Zebedee", "Quentin"]) == ["Zebedee", "Quentin"]
