"""The one search over memory: a user's facts and the turns of stored episodes, by recipe.

`search(store, query, cache, config, filters)` is what the runtime, the admin API and the
benchmarks call; `config` is a `SearchConfig` (retrieval/search_config.py): methods,
fusion, limit, neighbouring-turn windows, speaker awareness. Callers that search the same
episodes many times (a benchmark, a long session) build a `TurnCorpus` once and pass it.

Episode turns are read from the episode's transcripts, one turn per line: a line of
`user_transcript` is `SPEAKER<TAB>TEXT` when the episode had several human speakers,
otherwise plain text said by its first participant; `assistant_transcript` lines are
the assistant's. An episode's summary is searched as one more unit (turn index None).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from egomem.errors import NotFoundError
from egomem.retrieval.dense import EmbeddingCache, rrf
from egomem.retrieval.lexical import BM25Index
from egomem.retrieval.search_config import DEFAULT, FactSearch, Method, SearchConfig, SearchFilters, TurnSearch
from egomem.schemas import Episode, Fact, day_text
from egomem.store.base import MemoryStore

ASSISTANT = "assistant"
_SEP = "\t"  # never produced by ASR; typed text has its tabs folded to spaces by encode_turns


@dataclass(frozen=True)
class EpisodeTurn:
    speaker: str
    text: str


def encode_turns(turns: Sequence[EpisodeTurn]) -> str:
    """Speaker-tagged transcript (one `SPEAKER<TAB>TEXT` line per turn) for `user_transcript`."""
    return "\n".join(f"{_flat(t.speaker)}{_SEP}{_flat(t.text)}" for t in turns if t.text.strip())


def _flat(s: str) -> str:
    return " ".join(s.replace(_SEP, " ").split())


def episode_turns(episode: Episode, user_name: str) -> list[EpisodeTurn]:
    """The turns stored in an episode; untagged user lines are `user_name`'s."""
    turns = []
    for line in episode.user_transcript.splitlines():
        speaker, sep, text = line.partition(_SEP)
        if not sep:
            speaker, text = user_name, line
        if text.strip():
            turns.append(EpisodeTurn(speaker.strip() or user_name, text.strip()))
    turns += [EpisodeTurn(ASSISTANT, t.strip()) for t in episode.assistant_transcript.splitlines() if t.strip()]
    return turns


@dataclass(frozen=True)
class TurnHit:
    episode: Episode
    turn_index: int | None  # None: the episode's summary
    speaker: str
    text: str
    score: float


@dataclass(frozen=True)
class FactHit:
    fact: Fact
    score: float


@dataclass
class SearchResults:
    facts: list[FactHit] = field(default_factory=list)
    turns: list[TurnHit] = field(default_factory=list)


@dataclass(frozen=True)
class _Unit:
    episode: Episode
    turn_index: int | None
    speaker: str
    text: str


class TurnCorpus:
    """The searchable turns of a set of episodes, indexed for one `TurnSearch` recipe."""

    def __init__(self, store: MemoryStore, cache: EmbeddingCache, recipe: TurnSearch, filters: SearchFilters) -> None:
        self.recipe = recipe
        self.cache = cache
        self.units: list[_Unit] = []
        names: dict[str, str] = {}
        for ep in store.list_episodes(filters.user_id):
            if (filters.since is not None and ep.end < filters.since) or (
                filters.until is not None and ep.start > filters.until
            ):
                continue
            user_name = _name(store, ep.participants[0], names) if ep.participants else "user"
            if ep.summary.strip():
                self.units.append(_Unit(ep, None, "", ep.summary.strip()))
            for i, t in enumerate(episode_turns(ep, user_name)):
                self.units.append(_Unit(ep, i, t.speaker, t.text))
        docs = [self._doc(u) for u in self.units]
        self.docs = {"turn": docs}
        if recipe.window:
            w = recipe.window
            self.docs["window"] = [
                " ".join(d for j, d in enumerate(docs[max(0, i - w) : i + w + 1], max(0, i - w)) if self._same_ep(i, j))
                for i in range(len(docs))
            ]
        self.bm25 = {k: BM25Index(v) for k, v in self.docs.items()} if Method.BM25 in recipe.methods else {}
        self.vectors = {k: cache.embed(v) for k, v in self.docs.items()} if Method.DENSE in recipe.methods else {}
        speakers = sorted({u.speaker for u in self.units if u.speaker and u.speaker != ASSISTANT})
        self.speaker_names = {s: re.compile(rf"\b{re.escape(s)}\b", re.IGNORECASE) for s in speakers}
        self.speaker_of = np.array([u.speaker for u in self.units], dtype=object)

    def _same_ep(self, i: int, j: int) -> bool:
        return self.units[i].episode.id == self.units[j].episode.id

    def _doc(self, u: _Unit) -> str:
        if not self.recipe.with_speaker_and_date or u.turn_index is None:
            return u.text
        return f"{u.speaker} ({day_text(u.episode.start)}): {u.text}"

    def rank(self, query: str, limit: int) -> list[tuple[int, float]]:
        """(unit index, fused score) of the best `limit` units, best first."""
        n = len(self.units)
        if n == 0 or not query.strip():
            return []
        rankings = []
        qv = self.cache.embed([query])[0] if self.vectors else None
        for kind in self.docs:
            if kind in self.bm25:
                s = self.bm25[kind].scores(query)
                rankings.append(_order(s)[: int((s > 0).sum())])  # only units sharing a term
            if qv is not None:
                rankings.append(_order(self.vectors[kind] @ qv))
        fused = rrf(rankings, n, k=self.recipe.fusion.rrf_k)
        if self.recipe.speaker_aware:
            named = [s for s, pat in self.speaker_names.items() if pat.search(query)]
            if len(named) == 1:
                own = np.flatnonzero(self.speaker_of == named[0])
                own = own[_order(fused[own])]
                fused += rrf([own], n, k=self.recipe.fusion.rrf_k, weights=[self.recipe.speaker_weight])
        top = _order(fused)[:limit]
        return [(int(i), float(fused[i])) for i in top if fused[i] > 0]

    def search(self, query: str, limit: int) -> list[TurnHit]:
        out = []
        for i, score in self.rank(query, limit):
            u = self.units[i]
            out.append(TurnHit(u.episode, u.turn_index, u.speaker, u.text, score))
        return out


def search(
    store: MemoryStore,
    query: str,
    cache: EmbeddingCache,
    config: SearchConfig = DEFAULT,
    filters: SearchFilters | None = None,
    *,
    corpus: TurnCorpus | None = None,
) -> SearchResults:
    """Facts of `filters.user_id` (when given) and episode turns matching `query`, by `config`."""
    filters = filters or SearchFilters()
    out = SearchResults()
    if not query.strip():
        return out
    if config.facts is not None and filters.user_id is not None:
        out.facts = search_facts(store.list_facts(filters.user_id), query, cache, config.facts, config.limit)
    if config.turns is not None:
        corpus = corpus or TurnCorpus(store, cache, config.turns, filters)
        out.turns = corpus.search(query, config.limit)
    return out


def search_facts(facts: list[Fact], query: str, cache: EmbeddingCache, recipe: FactSearch, limit: int) -> list[FactHit]:
    if not facts or not query.strip():
        return []
    texts = [f.text for f in facts]
    rankings = []
    if Method.BM25 in recipe.methods:
        s = BM25Index(texts).scores(query)
        rankings.append(_order(s)[: int((s > 0).sum())])
    if Method.DENSE in recipe.methods:
        rankings.append(_order(cache.embed(texts) @ cache.embed([query])[0]))
    fused = rrf(rankings, len(facts), k=recipe.fusion.rrf_k) * np.array([support_weight(f.support) for f in facts])
    return [FactHit(facts[i], float(fused[i])) for i in _order(fused)[:limit] if fused[i] > 0]


SUPPORT_GAIN = 0.1


def support_weight(support: int) -> float:
    """A fact's search score factor from its evidence: x1 at support 1 (said once), +10% per
    doubling of the episodes that said it. Among near-equal matches the better supported one
    ranks first; a fact that matches nothing stays at 0. Not fitted on any benchmark."""
    return 1.0 + SUPPORT_GAIN * math.log2(max(support, 1))


def _order(scores: np.ndarray) -> np.ndarray:
    return np.argsort(-scores, kind="stable")


def speaker_user(store: MemoryStore, episode: Episode, speaker: str, memo: dict[str, str]) -> str | None:
    """The participant of `episode` who said a turn of `speaker` (episode_turns labels a turn with its
    speaker's name, "user" for an unnamed first participant), or None (the assistant, a stranger)."""
    for i, uid in enumerate(episode.participants):
        name = _name(store, uid, memo)
        if name == speaker and (name != "user" or i == 0):
            return uid
    return None


def _name(store: MemoryStore, user_id: str, memo: dict[str, str]) -> str:
    if user_id not in memo:
        try:
            memo[user_id] = store.get_user(user_id).name or "user"
        except NotFoundError:
            memo[user_id] = "user"
    return memo[user_id]
