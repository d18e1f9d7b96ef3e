"""The offline default backend of the `update` task: slot rules, then embedding duplicates.

For each candidate item, in order: a retraction closes the current fact of its slot
(DELETE); an exclusive slot with another current value is superseded (UPDATE: "moved to
Paris" over "lives in Lyon", "dislikes coffee" over "likes coffee"); the same value, or a
current fact at or above the duplicate cosine, is a NOOP; anything else is ADD. When one
session states one exclusive slot twice ("I live in Lyon ... actually I moved to Paris"),
only the last statement counts.
"""

from __future__ import annotations

from egomem.memory.items import Candidate, Decision, KnownFact, UpdateInput, UpdatePlan
from egomem.memory.slots import Slot, slot_of


def _slot_matches(slot: Slot, facts: list[KnownFact]) -> list[tuple[KnownFact, Slot]]:
    out = []
    for f in facts:
        other = slot_of(f.text)
        if other is not None and other.key == slot.key:
            out.append((f, other))
    return out


def _decide(c: Candidate, facts: list[KnownFact], threshold: float) -> Decision:
    item = c.item
    if item.kind == "summary":
        return Decision(index=c.index, op="ADD", reason="dialog summary")
    slot = slot_of(item.text)
    same = _slot_matches(slot, facts) if slot is not None else []
    if item.retract:
        if slot is None or not same:
            return Decision(index=c.index, op="NOOP", reason="retraction of nothing known")
        hit = next((f for f, s in same if s.value == slot.value), same[0][0])
        return Decision(index=c.index, op="DELETE", target=hit.id, reason=f"user retracted '{item.text}'")
    if slot is not None and same:
        for f, s in same:
            if s.value == slot.value:
                return Decision(index=c.index, op="NOOP", target=f.id, reason=f"already known (slot {slot.key})")
        if slot.exclusive:
            old = same[-1][0]
            return Decision(index=c.index, op="UPDATE", target=old.id, reason=f"new value for slot {slot.key}")
    for f, sim in zip(c.similar, c.similarity, strict=False):
        if sim >= threshold:
            return Decision(index=c.index, op="NOOP", target=f.id, reason=f"near-duplicate (cosine {sim:.2f})")
    return Decision(index=c.index, op="ADD", reason="new information")


def decide_rules(inp: UpdateInput) -> UpdatePlan:
    last_of_slot: dict[str, int] = {}
    for c in inp.candidates:
        s = slot_of(c.item.text)
        if s is not None and s.exclusive and c.item.kind != "summary":
            last_of_slot[s.key] = c.index
    decisions = []
    for c in inp.candidates:
        s = slot_of(c.item.text)
        if s is not None and s.exclusive and c.item.kind != "summary" and last_of_slot[s.key] != c.index:
            later = last_of_slot[s.key]
            decisions.append(
                Decision(index=c.index, op="NOOP", reason=f"contradicted later in the same session by item {later}")
            )
            continue
        decisions.append(_decide(c, inp.facts, inp.duplicate_cosine))
    return UpdatePlan(decisions=decisions)
