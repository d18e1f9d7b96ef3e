"""The LLM judge of one dialog turn: Fact Score (0/1) and Answer Quality (0-10), as JSON.

The judge runs the product's versioned prompt `llm/prompts/judge.v1.md` through the one LLM
interface (`ChatProvider.run`): a JSON-schema grammar for the local model, a json_schema
response format for an endpoint, and the answer validated either way. Anything that is not
a valid verdict (malformed JSON, a wrong shape, a dead endpoint) is a judge failure with its
reason, counted by the caller and never raised.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from egomem.llm.base import LLMError, LLMProvider

TASK = "judge"


class JudgeInput(BaseModel):
    # Memory first: consecutive turns of a session share the Level-1 text, so a local model's
    # prompt cache reuses it.
    level1_memory: str
    level2_memory: str
    user_said: str
    reference_answer: str
    model_answer: str


class JudgeVerdict(BaseModel):
    fact_score: Literal[0, 1]
    answer_quality: Literal[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]


@dataclass(frozen=True)
class Judgement:
    verdict: JudgeVerdict | None
    failure: str = ""  # why there is no verdict (the LLMError's reason)


def judge_turn(judge: LLMProvider, item: JudgeInput) -> Judgement:
    try:
        return Judgement(judge.run(TASK, item, JudgeVerdict))
    except LLMError as exc:
        return Judgement(None, exc.reason)
