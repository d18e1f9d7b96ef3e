"""`ask` answers from its best evidence when the model's answer names nothing in it (#21: the
default LLM answered "Assistant" to a question whose answer was evidence #1)."""

from __future__ import annotations

from typing import TypeVar

import pytest
from pydantic import BaseModel

from egomem.llm.base import LLMProvider
from egomem.retrieval.ask import Asker
from egomem.retrieval.ask_grounding import best_evidence, grounded
from egomem.retrieval.ask_types import AnswerInput, EvidenceItem
from egomem.retrieval.dense import EmbeddingCache
from egomem.retrieval.encoder import TextEncoder
from egomem.retrieval.search import EpisodeTurn, encode_turns
from egomem.schemas import Episode, Fact
from egomem.store.base import MemoryStore

T = TypeVar("T", bound=BaseModel)
DAY = 1_777_800_000.0  # 2026-05-03


class FixedAnswerLLM(LLMProvider):
    """A mock LLM provider, for the plumbing only: answers every question with `answer`."""

    name = "mock"

    def __init__(self, answer: str) -> None:
        super().__init__()
        self.answer = answer
        self.payloads: list[AnswerInput] = []

    def run(self, task: str, payload: BaseModel, schema: type[T]) -> T:
        assert task == "answer" and isinstance(payload, AnswerInput)
        self.payloads.append(payload)
        return schema.model_validate({"answer": self.answer, "used": [1]})


@pytest.fixture
def asker(store: MemoryStore, encoder: TextEncoder) -> Asker:
    emily = store.create_user("Emily").id
    ep = store.add_episode(
        Episode(
            start=DAY,
            end=DAY + 60,
            participants=[emily],
            user_transcript=encode_turns([EpisodeTurn("Emily", "I have been working as a nurse for six years.")]),
            assistant_transcript="Nice to meet you, a nurse, how lovely!",
        )
    ).id
    store.add_fact(Fact(user_id=emily, text="works as a nurse", valid_from=DAY + 60, source_episode=ep))
    return Asker(store, EmbeddingCache(encoder))


@pytest.mark.parametrize(
    ("model_says", "why"),
    [
        ("Assistant", "the assistant itself"),
        ("The assistant talked about their job and their name.", "the assistant itself"),
        ("Dr. Robert Smith, a surgeon from Boston.", "nothing in the evidence"),
        ("Unknown", "nothing in the evidence"),
    ],
)
def test_an_answer_not_from_the_evidence_becomes_the_best_evidence(asker: Asker, model_says: str, why: str) -> None:
    asker.llm = FixedAnswerLLM(model_says)
    res = asker.ask("Who works as a nurse?")
    best = res.evidence[0] if res.evidence[0].speaker != "assistant" else res.evidence[1]
    assert "nurse" in best.quote and best.person == "Emily"
    assert res.answered_by == "evidence" and res.model_answer == model_says
    assert res.answer == (
        f"The language model's answer named {why}; the best evidence is: "
        f'"{best.quote}" (Emily, {best.time_text[:10] if best.time_text else ""}).'
    )
    assert any(model_says[:40] in n and why in n for n in res.notes)
    assert not res.answer.lower().startswith(("assistant", "the assistant"))


@pytest.mark.parametrize(
    "model_says",
    ["Emily.", "She is a nurse.", "I don't know from memory.", "She has worked there since May 2026."],
)
def test_an_answer_from_the_evidence_stands(asker: Asker, model_says: str) -> None:
    asker.llm = FixedAnswerLLM(model_says)
    res = asker.ask("Who works as a nurse?")
    assert res.answered_by == "llm:mock" and res.answer == model_says and res.model_answer is None


def test_best_evidence_is_never_the_assistants_own_line() -> None:
    said = EvidenceItem(kind="turn", quote="Nice to meet you!", score=0.9, round=1, speaker="assistant")
    heard = EvidenceItem(kind="turn", quote="I am a nurse.", score=0.5, round=1, speaker="Emily", person="Emily")
    assert best_evidence([said, heard]) is heard
    assert best_evidence([said]) is said  # nothing else: the assistant's line, rather than nothing
    assert grounded("Nice to meet you", "What did you say?", [said])  # its words are evidence, its name is not
    assert not grounded("Assistant", "Who said it?", [said])


def test_yes_no_answers() -> None:
    ev = [EvidenceItem(kind="fact", quote="plays tennis", score=1.0, round=1, person="John")]
    assert grounded("Yes.", "Does John play tennis?", ev)
    assert grounded("No, John plays tennis on Sundays.", "Does John play golf?", ev)
    assert not grounded("Yes.", "Who plays tennis?", ev)  # not a yes/no question
    assert not grounded("The user.", "Who plays tennis?", ev)
    assert grounded("On the 3rd of May.", "When?", [ev[0].model_copy(update={"time": DAY})])
