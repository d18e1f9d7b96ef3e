"""A session longer than the model's context (a 30-minute monologue) is asked about in pieces
(memory/pieces.py, memory/extractor.py), instead of failing the model's pass."""

from __future__ import annotations

from typing import TypeVar

import pytest
from pydantic import BaseModel

from egomem.llm.base import LLMError, LLMProvider, PromptTooLong
from egomem.memory import pieces
from egomem.memory.extractor import MemoryExtractor
from egomem.memory.items import ExtractedItem, Extraction, SessionText, Turn

T = TypeVar("T", bound=BaseModel)

FILLER = "The weather was grey and the bus was late again this morning"


def _session(turns: list[Turn]) -> SessionText:
    return SessionText(episode_id="e-long", start=0.0, end=1800.0, date="2 December 2026", turns=turns)


def _monologue(n_turns: int) -> SessionText:
    turns = []
    for i in range(n_turns):
        turns.append(Turn(speaker="user", text=f"{FILLER}. I have a cousin in town number {i}."))
        if i % 5 == 4:
            turns.append(Turn(speaker="assistant", text="Go on."))
    return _session(turns)


class WordLimitedMock(LLMProvider):
    """Plumbing mock, not a model: refuses (PromptTooLong) a session of more than `limit` words,
    and otherwise answers one fact per user turn that names a town number, and a summary."""

    def __init__(self, limit: int, fail_on: str = "", failure: str = "answer cut off") -> None:
        super().__init__()
        self.limit = limit
        self.fail_on, self.failure = fail_on, failure  # a piece holding `fail_on` gets LLMError(failure)
        self.asked: list[int] = []  # words of each session answered

    def run(self, task: str, payload: BaseModel, schema: type[T]) -> T:
        assert isinstance(payload, SessionText)
        words = sum(len(t.text.split()) for t in payload.turns)
        if words > self.limit:
            raise PromptTooLong(f"{words} words")
        if self.fail_on and any(self.fail_on in t.text for t in payload.turns):
            raise LLMError(self.failure)
        self.asked.append(words)
        items = [ExtractedItem(kind="summary", text=f"piece of {words} words", source_text="x")]
        for t in payload.user_turns():
            for s in t.text.split(". "):
                if "cousin" in s:
                    quote = s.strip().rstrip(".")
                    items.append(ExtractedItem(kind="fact", text="has a cousin in town", source_text=quote))
        return schema.model_validate(Extraction(items=items).model_dump())


def test_a_session_too_long_for_the_model_is_asked_in_pieces_that_fit() -> None:
    session = _monologue(40)  # 40 user turns of 21 words
    model = WordLimitedMock(limit=200)
    result = MemoryExtractor(model).extract(session)  # the default: cut only when it does not fit
    assert model.asked and all(w <= 200 for w in model.asked)
    assert sum(model.asked) == sum(len(t.text.split()) for t in session.turns)  # every word asked once
    summaries = [it for it in result.items if it.kind == "summary"]
    assert len(summaries) == 1  # one summary for the episode
    assert summaries[0].text.startswith("piece of") and summaries[0].text.count("piece of") == len(model.asked)
    facts = [it for it in result.items if it.kind == "fact"]
    assert [f.text for f in facts] == ["has a cousin in town"]  # the same item from every piece, kept once


def test_one_long_turn_is_cut_between_sentences_then_words() -> None:
    one_turn = _session([Turn(speaker="user", text=" ".join(f"{FILLER} {i}." for i in range(30)))])
    first, second = pieces.halves(one_turn) or (None, None)
    assert first is not None and second is not None
    assert first.turns[0].text.endswith(".") and second.turns[0].text.startswith("The weather")
    assert first.episode_id == second.episode_id == "e-long" and first.date == one_turn.date
    no_stops = _session([Turn(speaker="user", text="yeah " * 500)])  # an ASR loop writes no full stops
    halves = pieces.halves(no_stops)
    assert halves is not None and [len(h.turns[0].text.split()) for h in halves] == [250, 250]
    assert pieces.halves(_session([Turn(speaker="user", text="Hello")])) is None


def test_a_single_word_that_does_not_fit_is_the_models_failure() -> None:
    with pytest.raises(LLMError, match="prompt too long"):
        MemoryExtractor(WordLimitedMock(limit=0)).extract(_session([Turn(speaker="user", text="Hello")]))


def test_pieces_without_words_of_the_user_are_not_sent() -> None:
    session = _session(
        [Turn(speaker="assistant", text=f"{FILLER}. " * 20), Turn(speaker="user", text="I have a cousin in town.")]
    )
    model = WordLimitedMock(limit=100)
    MemoryExtractor(model).extract(session)
    assert model.asked == [6]  # the assistant's half alone was never asked about


def test_a_session_longer_than_piece_words_is_cut_before_the_model_is_asked() -> None:
    model = WordLimitedMock(limit=10_000)
    MemoryExtractor(model, piece_words=100).extract(_monologue(40))
    assert len(model.asked) > 1 and max(model.asked) <= 100


def test_a_piece_answered_with_garbage_is_left_to_the_rules_and_the_others_stand() -> None:
    session = _monologue(40)
    session.turns[-1] = Turn(speaker="user", text="My sister lives by the sea.")
    model = WordLimitedMock(limit=10_000, fail_on="sister")
    result = MemoryExtractor(model, piece_words=200).extract(session)
    assert [f.text for f in result.items if f.kind == "fact"] == ["has a cousin in town"]
    down = WordLimitedMock(limit=10_000, fail_on="sister", failure="endpoint unreachable")
    with pytest.raises(LLMError, match="endpoint unreachable"):  # the model is down: the session waits
        MemoryExtractor(down, piece_words=200).extract(session)
