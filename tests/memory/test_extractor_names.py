"""A model's "name" that is a pronoun or common word never becomes the user's name."""

from __future__ import annotations

import pytest

from egomem.memory.extractor import _unsupported
from egomem.memory.items import ExtractedItem


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
