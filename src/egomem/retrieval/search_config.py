"""Search recipes: what `retrieval.search.search` does, as data.

A recipe names the ranking methods, how their rankings are fused, how many results come
back, and for episode turns whether neighbouring turns are indexed with each turn and
whether a query that names one speaker favours that speaker's turns. The runtime, the
admin API and the benchmarks pass a recipe to the one search function, so a benchmark
figure measures exactly what users run (Graphiti's `search_config.py` is the model).

The named recipes at the bottom are constants. `DEFAULT_TURNS` (window 2, speaker-aware)
is the recipe the LoCoMo dev grid (conversations 1-5) chose; `egomem bench locomo`
reports it on conversations 6-10 (test).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class Method(StrEnum):
    BM25 = "bm25"  # lexical: stemmed, stop-word-free BM25 (only documents sharing a term are ranked)
    DENSE = "dense"  # MiniLM cosine similarity


class _Recipe(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Fusion(_Recipe):
    """Reciprocal-rank fusion: score = sum over rankings of 1 / (k + rank)."""

    rrf_k: float = Field(default=60.0, gt=0)


class FactSearch(_Recipe):
    methods: tuple[Method, ...] = (Method.BM25, Method.DENSE)
    fusion: Fusion = Fusion()


class TurnSearch(_Recipe):
    """Search over the turns of stored episodes (who said what, when)."""

    methods: tuple[Method, ...] = (Method.BM25, Method.DENSE)
    fusion: Fusion = Fusion()
    # Each turn is also indexed joined with this many turns either side of it (0: off);
    # those rankings are fused with the single-turn ones. An answer often spans the
    # question and its reply.
    window: int = Field(default=0, ge=0, le=5)
    # A query naming exactly one of the speakers adds a ranking of that speaker's turns
    # alone (weight `speaker_weight`) to the fusion.
    speaker_aware: bool = False
    speaker_weight: float = Field(default=1.0, ge=0)
    # Turn text is indexed as "Speaker (date): text" so speaker and date words match.
    with_speaker_and_date: bool = True


class SearchFilters(_Recipe):
    """Which memories are searched (None: no restriction)."""

    user_id: str | None = None  # facts of this user; episodes this user took part in
    since: float | None = None  # episodes that ended at or after this time (epoch s)
    until: float | None = None  # episodes that started at or before this time


class SearchConfig(_Recipe):
    facts: FactSearch | None = FactSearch()
    turns: TurnSearch | None = TurnSearch()
    limit: int = Field(default=10, ge=1, le=1000)


# -- named recipes -------------------------------------------------------------------
FACTS_HYBRID = SearchConfig(facts=FactSearch(), turns=None, limit=5)
TURNS_BM25 = SearchConfig(facts=None, turns=TurnSearch(methods=(Method.BM25,)))
TURNS_DENSE = SearchConfig(facts=None, turns=TurnSearch(methods=(Method.DENSE,)))
TURNS_HYBRID = SearchConfig(facts=None, turns=TurnSearch())
TURNS_CONTEXT = SearchConfig(facts=None, turns=TurnSearch(window=1))
TURNS_CONTEXT_SPEAKER = SearchConfig(facts=None, turns=TurnSearch(window=1, speaker_aware=True))
# The product's recipe: the best of the grid on the dev conversations 1-5 of LoCoMo
# (window 2 + speaker, 0.767 there against 0.750 for window 1); reported on 6-10.
TURNS_WIDE_SPEAKER = SearchConfig(facts=None, turns=TurnSearch(window=2, speaker_aware=True))
DEFAULT_TURNS = TURNS_WIDE_SPEAKER
DEFAULT = SearchConfig(facts=FactSearch(), turns=DEFAULT_TURNS.turns, limit=10)
# `egomem ask` (retrieval/ask.py): the product's recipe; each search of a round ranks
# `[ask] pool` candidates, fused across rounds into the evidence returned.
ASK = SearchConfig(facts=FactSearch(), turns=DEFAULT_TURNS.turns, limit=50)

RECIPES: dict[str, SearchConfig] = {
    "facts_hybrid": FACTS_HYBRID,
    "turns_bm25": TURNS_BM25,
    "turns_dense": TURNS_DENSE,
    "turns_hybrid": TURNS_HYBRID,
    "turns_context": TURNS_CONTEXT,
    "turns_context_speaker": TURNS_CONTEXT_SPEAKER,
    "turns_wide_speaker": TURNS_WIDE_SPEAKER,
    "default": DEFAULT,
    "ask": ASK,
}
