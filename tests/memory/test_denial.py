"""Denials of identity are read narrowly (memory/denial.py)."""

from __future__ import annotations

import pytest

from egomem.memory.denial import denies_identity


@pytest.mark.parametrize(
    ("text", "name", "denies"),
    [
        ("That's not me.", "Alex", True),
        ("No, it's not me!", None, True),
        ("I'm not Alex.", "Alex", True),
        ("Sorry, I am not alex, I'm Sam.", "Alex", True),
        ("My name isn't Alex.", "Alex", True),
        ("I think you've got the wrong person.", None, True),
        ("You're thinking of someone else.", "Alex", True),
        ("We've never met before.", None, True),
        # not denials
        ("Not me, my sister does the cooking.", "Alex", False),
        ("I'm not sure, Alex.", "Alex", False),
        ("I'm not Alexander's friend.", "Alex", False),
        ("That's not me who broke it, it was the dog.", "Alex", False),
        ("I'm Alex.", "Alex", False),
        ("I'm not Sam.", "Alex", False),
    ],
)
def test_denials(text: str, name: str | None, denies: bool) -> None:
    assert denies_identity(text, name) is denies
