"""The update task sees short fact ids (f1, f2, ...) and its plan is mapped back to the real ids."""

from __future__ import annotations

from egomem.memory.items import Candidate, ExtractedItem, KnownFact, UpdateInput
from egomem.memory.updater import _aliased


def test_fact_ids_are_aliased_and_mapped_back() -> None:
    a, b = (
        KnownFact(id="f_3c9e41d0aa", kind="fact", text="lives in London"),
        KnownFact(id="f_77b2", kind="fact", text="works as a nurse"),
    )
    item = ExtractedItem(kind="fact", text="lives in Paris", source_text="we moved to Paris")
    inp = UpdateInput(facts=[a, b], candidates=[Candidate(index=0, item=item, similar=[a])])
    short, back = _aliased(inp)
    assert [f.id for f in short.facts] == ["f1", "f2"] and short.candidates[0].similar[0].id == "f1"
    assert back == {"f1": "f_3c9e41d0aa", "f2": "f_77b2"}
    assert [f.id for f in inp.facts] == ["f_3c9e41d0aa", "f_77b2"]  # the caller's input is untouched
