"""A model's "name" that is a pronoun, a common word or a word not written as a name never
becomes the user's name."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from egomem.llm.base import LLMProvider, T
from egomem.memory.extractor import MemoryExtractor, _unsupported
from egomem.memory.items import ExtractedItem, SessionText, Turn
from egomem.memory.rules_provider import RulesProvider


@pytest.mark.parametrize("name", ["You", "Me", "Someone", "Tired"])
def test_common_words_are_not_names(name: str) -> None:
    item = ExtractedItem(kind="name", text=name, source_text="it's me again")
    assert "common word" in _unsupported(item, f"it's me again {name.lower()} tired someone")


def test_a_real_name_that_was_said_passes() -> None:
    item = ExtractedItem(kind="name", text="Priya", source_text="I'm Priya")
    assert _unsupported(item, "i'm priya") == ""


@pytest.mark.parametrize(
    ("relation", "ok"), [("sister", True), ("colleagues", True), ("lives in", False), ("other", False)]
)
def test_a_relation_must_be_between_people(relation: str, ok: bool) -> None:
    item = ExtractedItem(
        kind="relation",
        text=f"has a {relation} Paris",
        person="Paris",
        relation=relation,
        source_text="we moved to Paris",
    )
    assert (_unsupported(item, "we moved to paris") == "") is ok


class _NameModel(LLMProvider):
    """A stand-in model (plumbing test): answers `extract` with one name item."""

    name = "scripted-name"

    def __init__(self, name: str, source: str) -> None:
        super().__init__()
        self.item = {"kind": "name", "text": name, "source_text": source}

    def run(self, task: str, payload: BaseModel, schema: type[T]) -> T:
        return schema.model_validate({"items": [self.item]})


def _names(
    said: list[str], name: str, source: str, *, rules: bool = False, known: list[str] | None = None
) -> list[str]:
    session = SessionText(
        episode_id="e",
        start=0.0,
        end=60.0,
        date="2 December 2026",
        turns=[Turn(speaker="user", text=t) for t in said],
        known_names=known or [],
    )
    extractor = MemoryExtractor(_NameModel(name, source), RulesProvider() if rules else None)
    return [i.text for i in extractor.extract(session).items if i.kind == "name"]


def test_a_job_word_in_cased_text_is_not_a_model_name() -> None:
    # Seen on a real run: the model took "operator" (the user's job) for the user's name, which
    # moved the session to a new person "Operator".
    said = ["Back again today.", "I work as an operator at the plant."]
    assert _names(said, "Operator", "I work as an operator at the plant.") == []


def test_a_capitalised_word_only_at_a_sentence_start_is_no_evidence() -> None:
    said = ["Morning.", "Harbour is where I work."]
    assert _names(said, "Harbour", "Harbour is where I work.") == []


@pytest.mark.parametrize(
    ("said", "name"),
    [
        (["Hi, I'm Zorbek, nice to meet you."], "Zorbek"),  # not in any lexicon: written as a name
        (["Priya here."], "Priya"),  # sentence-initial, but the first-name lexicon knows it
    ],
)
def test_a_name_written_as_one_is_kept(said: list[str], name: str) -> None:
    assert _names(said, name, said[0]) == [name]


def test_a_name_memory_knows_is_kept_at_a_sentence_start() -> None:
    assert _names(["Xandor here again."], "Xandor", "Xandor here again.", known=["Xandor"]) == ["Xandor"]


def test_a_refused_model_name_leaves_room_for_the_rules_name() -> None:
    said = ["Hello, my name is Zorbek.", "I work as an operator."]
    assert _names(said, "Operator", "I work as an operator.", rules=True) == ["Zorbek"]


def test_lower_case_text_is_left_to_the_other_checks() -> None:
    # No case, no evidence either way: the name only has to have been said.
    assert _names(["i am zorbek"], "Zorbek", "i am zorbek") == ["Zorbek"]
