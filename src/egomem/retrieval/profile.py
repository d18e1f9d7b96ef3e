"""Level-1 MemChunk: render one user's profile into a compact text within a token budget.

What goes in is ranked, and the chunk is filled best-first until the budget is reached,
then laid out in fixed sections (name; facts; preferences; recent conversations;
relations) so the dialog model always sees the same shape. Items that do not fit are
left out whole; the last one may be cut at a word boundary if a useful part fits.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from egomem.errors import NotFoundError
from egomem.identity.consent_gate import is_unsure_id
from egomem.privacy.sensitivity import is_sensitive
from egomem.retrieval.tokens import TokenCounter
from egomem.schemas import Fact, FactKind, MemChunk, Relation, now
from egomem.store.base import MemoryStore

# A scoring callable: (fact, now) -> higher is more worth showing. The memory engineer's
# consolidation strength (memory/strength.py) plugs in here.
FactScorer = Callable[[Fact, float], float]

RECENCY_HALF_LIFE_S = 30 * 86400.0
# Level 1 of a person identity is unsure about (runtime/unsure.py): someone to talk to, no one's memory.
UNSURE_VALUE = "not sure who this is yet"
UNSURE_HEADER = f"Current user: {UNSURE_VALUE} (share no one's memory; ask who they are)"
MIN_PARTIAL_TOKENS = 8  # below this a cut item says too little to be worth including
SECTION_TITLES = {
    FactKind.PERSONA: "About",
    FactKind.FACT: "Facts",
    FactKind.PREFERENCE: "Preferences",
    FactKind.SUMMARY: "Recent conversations",
}
RELATIONS_TITLE = "People they know"


def default_fact_score(fact: Fact, at: float) -> float:
    """Confidence and importance first, then recency (30-day half-life), use, and repeated
    evidence (episodes that confirmed it: support - 1)."""
    last = max(fact.valid_from, fact.last_used or 0.0)
    recency = math.exp(-max(at - last, 0.0) * math.log(2) / RECENCY_HALF_LIFE_S)
    use = math.log1p(fact.use_count) / math.log1p(20)
    confirmed = math.log1p(max(fact.support - 1, 0)) / math.log1p(10)
    return (
        0.35 * fact.confidence
        + 0.3 * fact.importance
        + 0.25 * recency
        + 0.1 * min(use, 1.0)
        + 0.1 * min(confirmed, 1.0)
    )


def relation_line(rel: Relation, user_id: str, name_of: Callable[[str | None, str | None], str]) -> str:
    """One edge seen from `user_id`: `John: colleague`, or for an incoming edge
    `Mia: (this user is Mia's mother)` — a reverse relation word is not inverted."""
    if rel.subject_id == user_id:
        return f"{name_of(rel.object_id, rel.object_name)}: {rel.relation}"
    other = name_of(rel.subject_id, None)
    return f"{other}: (this user is {other}'s {rel.relation})"


@dataclass
class _Item:
    section: str
    score: float
    text: str
    order: float  # placement inside its section (newest summaries first, else by score)


class ProfileRenderer:
    def __init__(
        self,
        store: MemoryStore,
        tokens: TokenCounter,
        *,
        budget: int = 512,
        scorer: FactScorer | None = None,
        max_summaries: int = 3,
    ) -> None:
        self.store = store
        self.tokens = tokens
        self.budget = budget
        self.scorer = scorer or default_fact_score
        self.max_summaries = max_summaries

    def _name_of(self, user_id: str | None, fallback: str | None) -> str:
        if user_id is not None:
            try:
                name = self.store.get_user(user_id).name
            except NotFoundError:
                name = None
            if name:
                return name
        return fallback or "someone unnamed"

    def render(self, user_id: str | None, *, at: float | None = None, others: Sequence[str] = ()) -> MemChunk:
        """The Level-1 chunk of `user_id`; an empty chunk for None or an unknown id. `others`:
        other people present, named in one line under the header with their relation to the
        user ("Also here: Ben (husband)"), inside the same budget."""
        at = now() if at is None else at
        if user_id is None:
            return MemChunk(level=1, text="", tokens=0, user_id=None, at=at)
        try:
            user = self.store.get_user(user_id)
        except NotFoundError:
            if is_unsure_id(user_id):  # someone is there, but who is not settled: nobody's memory
                return MemChunk(level=1, text=UNSURE_HEADER, tokens=self.tokens.count_tokens(UNSURE_HEADER),
                                user_id=user_id, at=at)  # fmt: skip
            return MemChunk(level=1, text="", tokens=0, user_id=None, at=at)
        header = f"Current user: {user.name or 'name not known yet'}"
        if others:
            header += "\n" + self._also_here(user_id, others)
        # Someone else can hear: the user's sensitive facts stay out (egomem.privacy.sensitivity).
        items = self._items(user_id, at, private=not others)
        text = self._fill(header, items)
        return MemChunk(level=1, text=text, tokens=self.tokens.count_tokens(text), user_id=user_id, at=at)

    def _also_here(self, user_id: str, others: Sequence[str]) -> str:
        # Who the other person is to the user: the user's own edge word, or an incoming edge
        # seen the other way round ("Ben (Anna's husband)" when Anna called Ben her husband).
        words: dict[str, str] = {}
        for r in self.store.list_relations(user_id):
            if r.subject_id == user_id and r.object_id:
                words[r.object_id] = r.relation
            elif r.subject_id != user_id:
                words.setdefault(r.subject_id, f"this user is their {r.relation}")
        names = []
        for other in others:
            name = self._name_of(other, None)
            names.append(f"{name} ({words[other]})" if other in words else name)
        return "Also here: " + ", ".join(names)

    def _items(self, user_id: str, at: float, *, private: bool = True) -> list[_Item]:
        items: list[_Item] = []
        summaries: list[Fact] = []
        for f in self.store.list_facts(user_id):
            if not private and is_sensitive(f.sensitivity):
                continue
            if f.kind == FactKind.SUMMARY:
                summaries.append(f)
                continue
            s = self.scorer(f, at)
            items.append(_Item(SECTION_TITLES[f.kind], s, " ".join(f.text.split()), -s))
        # Dialog summaries: only the most recent few, newest first.
        summaries.sort(key=lambda f: f.valid_from, reverse=True)
        for rank, f in enumerate(summaries[: self.max_summaries]):
            s = self.scorer(f, at)
            items.append(_Item(SECTION_TITLES[FactKind.SUMMARY], s, " ".join(f.text.split()), float(rank)))
        # Relations are few and let the model connect names: rank them above any fact; among
        # them, the better supported first (when the budget cuts, the weakest edges go).
        edges = sorted(self.store.list_relations(user_id), key=lambda r: -r.support)
        for rank, rel in enumerate(edges):
            line = relation_line(rel, user_id, self._name_of)
            items.append(_Item(RELATIONS_TITLE, 2.0, " ".join(line.split()), float(rank)))
        return items

    def _fill(self, header: str, items: list[_Item]) -> str:
        used = self.tokens.count_tokens(header)
        if used > self.budget:
            return self.tokens.truncate(header, self.budget)
        chosen: dict[str, list[_Item]] = {}
        for item in sorted(items, key=lambda i: -i.score):
            if not item.text:
                continue
            title_cost = 0 if item.section in chosen else self.tokens.count_tokens(item.section + ":")
            line = "- " + item.text
            cost = title_cost + self.tokens.count_tokens(line)
            room = self.budget - used
            if cost > room:
                if room - title_cost < MIN_PARTIAL_TOKENS:
                    continue  # a shorter item may still fit
                line = self.tokens.truncate(line, room - title_cost)
                if len(line) <= 2:
                    continue
                cost = title_cost + self.tokens.count_tokens(line)
            chosen.setdefault(item.section, []).append(_Item(item.section, item.score, line, item.order))
            used += cost
        parts = [header]
        for title in [*SECTION_TITLES.values(), RELATIONS_TITLE]:
            if title in chosen:
                parts.append(title + ":")
                parts.extend(i.text for i in sorted(chosen[title], key=lambda i: i.order))
        text = "\n".join(parts)
        # Whitespace-split tokenizers make the sum exact; this guard covers any other one.
        if self.tokens.count_tokens(text) > self.budget:
            text = self.tokens.truncate(text, self.budget)
        return text
