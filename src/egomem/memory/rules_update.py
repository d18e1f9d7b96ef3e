"""The offline default backend of the `update` task: slot rules, then word matches and
embedding duplicates.

For each candidate item, in order: a retraction closes the current fact it names (DELETE:
the fact of its slot with the same value, every value of the slot for "I quit my job", or
for a fact without a slot one whose words contain all the retraction's words: "I stopped
smoking" closes "smokes every day" but not "likes smoked salmon"); a retraction that
matches nothing is a NOOP, never a guess. An exclusive slot with another current value is
superseded (UPDATE: "moved to Paris" over "lives in Lyon", "dislikes coffee" over "likes
coffee"), and so is a non-exclusive one when the user said it changed; the same value,
or a current fact at or above the duplicate cosine, is a NOOP; anything else is ADD. When
one session states one exclusive slot twice ("I live in Lyon ... actually I moved to
Paris"), only the last statement counts.
"""

from __future__ import annotations

import re
from functools import cache

from egomem.memory.items import Candidate, Decision, KnownFact, UpdateInput, UpdatePlan
from egomem.memory.slots import Slot, slot_of

# Words that say how often or how strongly, not what: "smokes every day" is still "smokes".
_NOT_CONTENT = set(
    "a an the to of in on at for with and their them they my our is are every each day days week weeks morning "
    "evening night weekend weekends usually always often normally once twice a lot much still now".split()
)
_IRREGULAR = {"goes": "go", "going": "go", "went": "go", "has": "have", "had": "have", "does": "do", "did": "do"}


@cache
def _stemmer() -> object:
    import Stemmer  # PyStemmer, already a dependency of the lexical index

    return Stemmer.Stemmer("english")


def content_stems(text: str) -> tuple[str, ...]:
    words = [w for w in re.findall(r"[a-z]+", text.lower()) if w not in _NOT_CONTENT]
    return tuple(_stemmer().stemWords([_IRREGULAR.get(w, w) for w in words]))  # type: ignore[attr-defined]


# Verbs that only carry an activity or a thing ("goes running", "plays tennis", "drinks
# coffee"): a retraction that names the activity alone ("I stopped running", "I switched
# from coffee to tea") still names the fact. "likes" is not one: a liking is not a habit.
_LIGHT_VERBS = frozenset(("go", "do", "play", "drink", "eat", "practic", "practis"))


def retracts(retraction: str, fact: str) -> bool:
    """Whether a retraction names this fact: same leading verb, and every word of the
    retraction in the fact ("smoking" -> "smokes every day", not "likes smoked salmon");
    a fact's light verb may be left unsaid ("running" -> "goes running every morning")."""
    r, f = content_stems(retraction), content_stems(fact)
    if r and len(f) > 1 and f[0] in _LIGHT_VERBS and r[0] != f[0]:
        f = f[1:]
    return bool(r) and bool(f) and r[0] == f[0] and set(r) <= set(f)


# Words that turn a statement into its opposite: "no longer smokes" is no repeat of "smokes"
# however close their embeddings ("lives in Paris" / "no longer lives in Paris": 0.855).
_NEGATIVE = frozenset("not no never longer anymore stopped quit gave used former formerly dislikes hates".split())


def _negative(text: str) -> bool:
    words = re.findall(r"[a-z']+", text.lower())
    return any(w in _NEGATIVE or w.endswith("n't") for w in words)


def _same_value(a: str, b: str) -> bool:
    """'google' and 'google inc' name one workplace; 'google' and 'apple' do not."""
    sa, sb = set(content_stems(a)), set(content_stems(b))
    return a == b or (bool(sa) and bool(sb) and (sa <= sb or sb <= sa))


def _same_slot_value(a: str, b: str) -> bool:
    """'paris' and 'paris, france', 'google' and 'google inc': one value, said with more words
    after it. Not 'york' and 'new york': a word before it names another thing."""
    wa, wb = re.findall(r"[a-z0-9]+", a.lower()), re.findall(r"[a-z0-9]+", b.lower())
    short, long_ = sorted((wa, wb), key=len)
    return bool(short) and long_[: len(short)] == short


def _slot_matches(slot: Slot, facts: list[KnownFact]) -> list[tuple[KnownFact, Slot]]:
    out = []
    for f in facts:
        other = slot_of(f.text)
        if other is not None and other.key == slot.key:
            out.append((f, other))
    return out


def _retraction(c: Candidate, facts: list[KnownFact], slot: Slot | None) -> Decision:
    item = c.item
    if slot is not None:
        same = _slot_matches(slot, facts)
        hit = same[-1][0] if same and item.retract_slot else None
        hit = hit or next((f for f, s in same if _same_value(s.value, slot.value)), None)
    else:
        hit = next((f for f in facts if retracts(item.text, f.text)), None)
    if hit is None:
        return Decision(index=c.index, op="NOOP", reason="retraction of nothing known")
    return Decision(index=c.index, op="DELETE", target=hit.id, reason=f"user retracted '{item.text}'")


def _decide(c: Candidate, facts: list[KnownFact], threshold: float) -> Decision:
    item = c.item
    if item.kind == "summary":
        return Decision(index=c.index, op="ADD", reason="dialog summary")
    slot = slot_of(item.text)
    if item.retract:
        return _retraction(c, facts, slot)
    same = _slot_matches(slot, facts) if slot is not None else []
    if slot is not None and same:
        for f, s in same:
            if s.value == slot.value or _same_slot_value(s.value, slot.value):
                return Decision(index=c.index, op="NOOP", target=f.id, reason=f"already known (slot {slot.key})")
        if slot.exclusive or item.change:
            old = same[-1][0]
            why = "the user said it changed" if item.change else f"new value for slot {slot.key}"
            return Decision(index=c.index, op="UPDATE", target=old.id, reason=why)
    for f, sim in zip(c.similar, c.similarity, strict=False):
        if sim >= threshold and _negative(item.text) == _negative(f.text):
            return Decision(index=c.index, op="NOOP", target=f.id, reason=f"near-duplicate (cosine {sim:.2f})")
    return Decision(index=c.index, op="ADD", reason="new information")


def decide_rules(inp: UpdateInput) -> UpdatePlan:
    last_of_slot: dict[str, int] = {}
    for c in inp.candidates:
        s = slot_of(c.item.text)
        if s is not None and s.exclusive and c.item.kind != "summary" and not c.item.retract:
            last_of_slot[s.key] = c.index
    decisions = []
    for c in inp.candidates:
        s = slot_of(c.item.text)
        exclusive = s is not None and s.exclusive and c.item.kind != "summary" and not c.item.retract
        if exclusive and s is not None and last_of_slot[s.key] != c.index:
            later = last_of_slot[s.key]
            decisions.append(
                Decision(index=c.index, op="NOOP", reason=f"contradicted later in the same session by item {later}")
            )
            continue
        decisions.append(_decide(c, inp.facts, inp.duplicate_cosine))
    return UpdatePlan(decisions=change_wins(decisions))


def change_wins(decisions: list[Decision]) -> list[Decision]:
    """ "I used to work as a teacher, now I'm a nurse" retracts the teacher fact and updates it
    to nurse: one fact, two decisions. The update alone closes it (with its history) and
    writes the new state; a close first would leave the update no target to replace."""
    updated = {d.target: d.index for d in decisions if d.op == "UPDATE" and d.target}
    return [
        Decision(index=d.index, op="NOOP", target=d.target, reason=f"closed by the change in item {updated[d.target]}")
        if d.op == "DELETE" and d.target in updated
        else d
        for d in decisions
    ]
