"""What `ask` returns: typed evidence with its sources, and the answer built from it.

An `EvidenceItem` is one thing memory holds that bears on the question: a fact about a
person (`fact_id`), a turn of a stored episode (`episode_id`, `turn_index`, who said it,
when), an episode's summary, or an edge of the social graph. `quote` is the stored words
themselves, never a paraphrase. `AskResult.empty` marks the defined empty answer ("I have
nothing about ..."): an unknown person, an empty store.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

EvidenceKind = Literal["fact", "turn", "summary", "relation"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PersonRef(_Model):
    """A person the question names or implies, as resolved against the store."""

    mention: str  # the words of the question ("my sister", "Anna")
    user_id: str | None = None  # None: a bare name in the social graph, never met
    name: str | None = None
    relation: str | None = None  # to the asking user, when resolved through the social graph


class FactFusion(_Model):
    """How `ask` ranks extracted facts beside the raw turns they came from (typed search data,
    like the recipes of retrieval/search_config.py; set by `[ask]`, chosen on LoCoMo dev,
    docs/benchmarks/locomo-qa.md).

    Facts' and relations' fused scores (what extraction wrote) are scaled by `facts_weight`
    against the turns' (0.5: after every turn of a round's pool; 1: side by side). With
    `fold_facts` a fact whose source turn was found too does not take a second evidence slot:
    the turn keeps the better of the two places. On LoCoMo dev every weight that let
    rules-extracted facts into the best 10 lowered evidence recall (R@10 1.0: 0.741, 0.75: 0.778,
    0.5: 0.779): a fact mostly restates a turn the search finds anyway."""

    facts_weight: float = Field(ge=0.0)  # the defaults are [ask]'s (config.AskConfig)
    fold_facts: bool


class TimeWindow(_Model):
    """The time a question restricts evidence to (epoch seconds; None: open)."""

    text: str  # the words it came from ("last Tuesday", "--as-of 2024-05-01")
    since: float | None = None
    until: float | None = None


class EvidenceItem(_Model):
    kind: EvidenceKind
    quote: str  # the stored words
    score: float  # fused rank score of the final ranking (higher is better)
    round: int = Field(ge=1)  # the retrieval round that first found it
    via: str = ""  # why it was searched: "question", "person: Anna (sister)", "other episodes", ...
    time: float | None = None  # when it was said or learnt (epoch seconds)
    time_text: str | None = None  # the same, ISO 8601 UTC
    person_id: str | None = None  # whom a fact is about / who said a turn (when known)
    person: str | None = None
    speaker: str | None = None
    episode_id: str | None = None
    turn_index: int | None = None
    fact_id: str | None = None
    source_turn: int | None = None  # a fact's: the turn of its episode it was extracted from, when found
    relation_id: str | None = None

    @property
    def key(self) -> str:
        """One identity per stored thing, across rounds."""
        if self.fact_id:
            return f"fact:{self.fact_id}"
        if self.relation_id:
            return f"relation:{self.relation_id}"
        return f"turn:{self.episode_id}:{self.turn_index}"


class AskResult(_Model):
    question: str
    answer: str
    # "llm:<provider>" (a language model answered from the evidence), "evidence" (no model:
    # the best evidence itself), or "none" (nothing found: `empty`).
    answered_by: str
    empty: bool = False
    evidence: list[EvidenceItem] = Field(default_factory=list)
    people: list[PersonRef] = Field(default_factory=list)
    time: TimeWindow | None = None
    as_of: float | None = None
    rounds: int = 0
    stopped: str = ""  # why the rounds ended: "enough evidence", "no new evidence", "max rounds"
    notes: list[str] = Field(default_factory=list)
    # What the language model answered when it was not used: its answer named nothing in the
    # evidence, or the assistant as the person (`answered_by` is then "evidence").
    model_answer: str | None = None


# -- the `answer` LLM task (prompt: llm/prompts/answer.v1.md) ---------------------------
class AnswerEvidence(_Model):
    n: int
    text: str
    who: str = ""
    when: str = ""


class AnswerInput(_Model):
    question: str
    asking_user: str = ""
    evidence: list[AnswerEvidence]


class AnswerOutput(_Model):
    answer: str = Field(max_length=2000)
    used: list[int] = Field(default_factory=list)  # the evidence numbers the answer rests on
