"""Level-2 retrieval over the social graph, as in the paper.

For each person U connected to the current user A, U's name and relation to A are
joined with each of U's memory items into one candidate document. Relation words
select the relevant people's documents with BM25 over the "name, relation" part; the
joined keywords re-rank them by dense similarity; the top K fill the Level-2 chunk.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from egomem.errors import NotFoundError
from egomem.privacy.sensitivity import is_sensitive
from egomem.relations import GENDER_OF_WORD, inverse_relation, relation_terms
from egomem.retrieval.dense import EmbeddingCache
from egomem.retrieval.lexical import BM25Index
from egomem.retrieval.tokens import TokenCounter
from egomem.schemas import FactKind, MemChunk, now
from egomem.store.base import MemoryStore


@dataclass(frozen=True)
class Candidate:
    person: str  # U's name (or the bare name of a person not met yet)
    relation: str  # U's relation to A, as stored
    text: str  # the memory item ("" for a person with no items yet)
    person_id: str | None = None
    fact_id: str | None = None
    terms: str = ""  # other words a query may use for the relation ("brother sister" for "sibling")

    @property
    def head(self) -> str:
        return f"{self.person}, {self.relation}"

    @property
    def match_head(self) -> str:
        return f"{self.head} {self.terms}" if self.terms else self.head

    @property
    def document(self) -> str:
        return f"{self.head}: {self.text}" if self.text else self.head


def candidates_for(store: MemoryStore, user_id: str, *, others_present: Sequence[str] = ()) -> list[Candidate]:
    """Every (person, relation, item) document around `user_id` (empty if none or unknown). Sensitive
    facts are left out while anyone but the user is present (`others_present`): the robot speaks aloud."""
    try:
        store.get_user(user_id)
    except NotFoundError:
        return []
    out: list[Candidate] = []
    for rel in store.list_relations(user_id):
        if rel.subject_id == user_id:
            other_id, other_name, relation = rel.object_id, rel.object_name, rel.relation
        else:
            # An incoming edge: A is U's <relation>, so U is A's inverse relation (A's sister
            # U is A's brother, or sibling while U's gender is unknown). Read at query time
            # rather than stored twice, so closing or merging an edge needs no twin to keep.
            other_id, other_name = rel.subject_id, None
            relation = inverse_relation(rel.relation, _gender(store, other_id))
        if other_id == user_id:
            continue
        terms = " ".join(t for t in relation_terms(relation) if t != relation)
        name = other_name or "someone unnamed"
        facts = []
        if other_id is not None:
            try:
                name = store.get_user(other_id).name or name
            except NotFoundError:
                other_id = None
            else:
                # What a person is like, not what was said when: a session summary would
                # out-score the one fact a question is about (it repeats every keyword).
                facts = [
                    f
                    for f in store.list_facts(other_id)
                    if f.kind != FactKind.SUMMARY and not (is_sensitive(f.sensitivity) and others_present)
                ]
        if not facts:
            out.append(Candidate(name, relation, "", other_id, terms=terms))
        out.extend(Candidate(name, relation, " ".join(f.text.split()), other_id, f.id, terms) for f in facts)
    return out


def _gender(store: MemoryStore, person_id: str | None) -> str | None:
    """A person's gender as others' words for them say it ("Tom is my brother"), if they agree."""
    if person_id is None:
        return None
    said = {
        GENDER_OF_WORD.get(r.relation)
        for r in store.list_relations(person_id)
        if r.object_id == person_id and r.subject_id != person_id
    } - {None}
    return said.pop() if len(said) == 1 else None


class _Prepared:
    """BM25 over the distinct "name, relation" heads and the document embedding matrix."""

    def __init__(self, cands: Sequence[Candidate], cache: EmbeddingCache) -> None:
        heads = list(dict.fromkeys(c.match_head for c in cands))
        where = {h: i for i, h in enumerate(heads)}
        self.head_of = np.fromiter((where[c.match_head] for c in cands), dtype=np.int64, count=len(cands))
        self.bm25 = BM25Index(heads)
        self.cache = cache
        self._matrix: np.ndarray | None = None
        self._docs = [c.document for c in cands]

    def matrix(self) -> np.ndarray:
        if self._matrix is None:
            self._matrix = self.cache.embed(self._docs)
        return self._matrix


class CandidateIndex:
    """Keeps the prepared index of the last few candidate sets: a stable social graph
    costs no re-indexing per query (the key is the documents themselves, so any change
    in the graph or in a fact is a new key)."""

    def __init__(self, cache: EmbeddingCache, max_sets: int = 8) -> None:
        self.cache = cache
        self.max_sets = max_sets
        self._sets: OrderedDict[tuple[str, ...], _Prepared] = OrderedDict()
        self._lock = threading.Lock()

    def prepared(self, cands: Sequence[Candidate]) -> _Prepared:
        key = tuple(c.document for c in cands)
        with self._lock:
            hit = self._sets.get(key)
            if hit is not None:
                self._sets.move_to_end(key)
                return hit
        prep = _Prepared(cands, self.cache)
        with self._lock:
            self._sets[key] = prep
            while len(self._sets) > self.max_sets:
                self._sets.popitem(last=False)
        return prep


def rank_candidates(
    cands: Sequence[Candidate],
    relation_words: Sequence[str],
    keywords: Sequence[str],
    index: CandidateIndex,
    k: int,
) -> list[tuple[Candidate, float]]:
    """The paper's two stages. BM25 over "name, relation" with the relation words keeps
    the documents that match at all; with no match (e.g. a relation word the graph does
    not use) every document stays in play rather than answering nothing. Keywords then
    rank by cosine; without keywords the BM25 score ranks."""
    if not cands or k <= 0 or (not relation_words and not keywords):
        return []
    prep = index.prepared(cands)
    pool = np.arange(len(cands))
    lex = np.zeros(len(cands), dtype=np.float32)
    if relation_words:
        lex = prep.bm25.scores(list(relation_words))[prep.head_of]
        if (lex > 0).any():
            pool = np.flatnonzero(lex > 0)
    if keywords:
        q = index.cache.encoder.encode([", ".join(keywords)])[0]
        score = prep.matrix()[pool] @ q
    else:
        score = lex[pool]
    order = np.argsort(-score, kind="stable")[:k]
    return [(cands[int(pool[i])], float(score[i])) for i in order]


def render_level2(
    hits: Sequence[tuple[Candidate, float]], tokens: TokenCounter, budget: int, user_id: str | None
) -> MemChunk:
    """Best hits first, one line each, whole lines only (the last may be cut at a word)."""
    lines: list[str] = []
    used = 0
    for cand, _ in hits:
        line = f"- {cand.document}"
        cost = tokens.count_tokens(line)
        if used + cost > budget:
            rest = tokens.truncate(line, budget - used)
            if len(rest) > 2 and budget - used >= 8:
                lines.append(rest)
            break
        lines.append(line)
        used += cost
    text = "\n".join(lines)
    return MemChunk(level=2, text=text, tokens=tokens.count_tokens(text), user_id=user_id, at=now())
