"""The cheap gate before the model (`[memory] extract_gate`): a session in which the user says
nothing about themselves is not worth a model's 10-40 CPU seconds.

A session passes when the rules (run anyway, as the model's supplement) found an item other
than the summary, or when some sentence of the user's is a first-person statement (I, my,
me, we, our, ... outside a question). Otherwise ("Hey.", "What time is it?", "That's
interesting.") the rules' answer stands alone. What this loses is measured by
`egomem bench xcost` (docs/benchmarks/xcost.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from egomem.memory.compact import sentences
from egomem.memory.items import ExtractedItem, SessionText
from egomem.memory.statements import is_question

_FIRST_PERSON = re.compile(
    r"\b(?:i|i'm|im|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|we'd|we'll|us|our|ours|ourselves)\b"
)


def first_person_statements(session: SessionText) -> list[str]:
    """The user's sentences that say something in the first person and are not questions."""
    out = []
    for turn in session.user_turns():
        for s in sentences(turn.text):
            if not is_question(s) and _FIRST_PERSON.search(s.lower().replace("’", "'")):
                out.append(s)
    return out


def worth_a_model(session: SessionText, rules_items: Iterable[ExtractedItem]) -> bool:
    """Whether the session may hold personal content the rules could have missed."""
    if any(it.kind != "summary" for it in rules_items):
        return True
    return bool(first_person_statements(session))
