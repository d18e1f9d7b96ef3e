"""`ask` over a small store built here: people, a relation, facts, episodes."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TypeVar

import pytest
from pydantic import BaseModel

from egomem.config import AskConfig
from egomem.errors import InputError, NotFoundError
from egomem.llm.base import LLMError, LLMProvider
from egomem.retrieval.ask import Asker
from egomem.retrieval.ask_types import AnswerInput, AskResult, FactFusion
from egomem.retrieval.dense import EmbeddingCache
from egomem.retrieval.encoder import TextEncoder
from egomem.retrieval.search import EpisodeTurn, encode_turns
from egomem.retrieval.timex import find_time, parse_as_of
from egomem.schemas import Episode, Fact, Relation
from egomem.store.base import MemoryStore

T = TypeVar("T", bound=BaseModel)


def ts(day: str) -> float:
    return datetime.fromisoformat(day).replace(tzinfo=UTC).timestamp()


@pytest.fixture
def home(store: MemoryStore) -> dict[str, str]:
    """Tom, his sister Anna (with facts learnt in May and in July), and two episodes."""
    tom = store.create_user("Tom").id
    anna = store.create_user("Anna").id
    store.add_relation(Relation(subject_id=tom, relation="sister", object_id=anna, valid_from=ts("2024-05-01")))
    may = store.add_episode(
        Episode(
            start=ts("2024-05-07T10:00:00"),
            end=ts("2024-05-07T10:05:00"),
            participants=[anna],
            user_transcript=encode_turns(
                [
                    EpisodeTurn("Anna", "I just got back from Lisbon, the tiles were beautiful."),
                    EpisodeTurn("Tom", "Nice!"),
                ]
            ),
        )
    ).id
    jul = store.add_episode(
        Episode(
            start=ts("2024-07-02T18:00:00"),
            end=ts("2024-07-02T18:05:00"),
            participants=[tom],
            user_transcript=encode_turns([EpisodeTurn("Tom", "My car broke down on the motorway again.")]),
        )
    ).id
    f1 = Fact(user_id=anna, text="likes green tea", valid_from=ts("2024-05-07T10:05:00"), source_episode=may)
    store.add_fact(f1)
    f2 = Fact(user_id=anna, text="likes rock climbing", valid_from=ts("2024-07-02T18:05:00"), source_episode=jul)
    store.add_fact(f2)
    store.add_fact(Fact(user_id=tom, text="works as a nurse", valid_from=ts("2024-05-01")))
    return {"tom": tom, "anna": anna, "may": may, "jul": jul, "tea": f1.id, "climbing": f2.id}


@pytest.fixture
def cache(encoder: TextEncoder) -> EmbeddingCache:
    return EmbeddingCache(encoder)


def test_my_sister_resolves_through_the_social_graph(
    store: MemoryStore, home: dict[str, str], cache: EmbeddingCache
) -> None:
    before = len(store.history())
    res = Asker(store, cache).ask("What does my sister like?", user_id=home["tom"])
    assert not res.empty and res.answered_by == "evidence" and "No language model" in res.answer
    assert [(p.user_id, p.relation) for p in res.people if p.relation != "self"] == [(home["anna"], "sister")]
    facts = [e for e in res.evidence if e.kind == "fact"]
    assert {e.fact_id for e in facts[:2]} == {home["tea"], home["climbing"]}
    assert all(e.person_id == home["anna"] for e in facts[:2])
    tea = next(e for e in facts if e.fact_id == home["tea"])
    assert tea.quote == "likes green tea" and tea.episode_id == home["may"] and tea.time_text == "2024-05-07T10:05:00Z"
    assert any(e.kind == "relation" and "Anna is Tom's sister" in e.quote for e in res.evidence)
    assert len(store.history()) == before  # ask writes nothing


def test_without_user_my_sister_is_nothing(store: MemoryStore, home: dict[str, str], cache: EmbeddingCache) -> None:
    res = Asker(store, cache).ask("What does my sister like?")
    assert res.empty and res.answer == "I have nothing about your sister." and res.evidence == []
    assert any("--user" in n for n in res.notes)


def test_unknown_person_and_unknown_relation(store: MemoryStore, home: dict[str, str], cache: EmbeddingCache) -> None:
    asker = Asker(store, cache)
    res = asker.ask("What does Zorblax like to eat?")
    assert res.empty and res.answer == "I have nothing about Zorblax."
    res = asker.ask("Where does my brother live?", user_id=home["tom"])
    assert res.empty and res.answer == "I have nothing about your brother."
    with pytest.raises(NotFoundError):
        asker.ask("What do I like?", user_id="u_nobody")


def test_empty_store_and_bad_questions(store: MemoryStore, cache: EmbeddingCache) -> None:
    asker = Asker(store, cache)
    res = asker.ask("What does Anna like?")
    assert res.empty and res.answer == "I have nothing about anything: memory is empty." and res.evidence == []
    with pytest.raises(InputError):
        asker.ask("   ")
    with pytest.raises(InputError):
        asker.ask("x" * 2000)


def test_as_of_excludes_later_facts_and_episodes(
    store: MemoryStore, home: dict[str, str], cache: EmbeddingCache
) -> None:
    asker = Asker(store, cache)
    res = asker.ask("What does my sister like?", user_id=home["tom"], as_of=parse_as_of("2024-06-01"))
    found = {e.fact_id for e in res.evidence if e.fact_id}
    assert home["tea"] in found and home["climbing"] not in found
    assert all(e.time is not None and e.time <= parse_as_of("2024-06-01") for e in res.evidence)
    assert home["jul"] not in {e.episode_id for e in res.evidence if e.kind == "turn"}
    res = asker.ask("What does my sister like?", user_id=home["tom"], as_of=parse_as_of("2024-08-01"))
    assert home["climbing"] in {e.fact_id for e in res.evidence}


def test_time_expressions(store: MemoryStore, home: dict[str, str], cache: EmbeddingCache) -> None:
    asker = Asker(store, cache)
    res = asker.ask("What did Anna talk about in May?")
    assert res.time is not None and res.time.text == "in May"
    turns = [e for e in res.evidence if e.kind == "turn"]
    assert turns and {e.episode_id for e in turns} == {home["may"]}
    assert turns[0].speaker == "Anna" and "Lisbon" in turns[0].quote
    # "last Tuesday" relative to the latest time memory holds (Tuesday 2 July 2024 -> 25 June): nothing
    # is dated then, which the result says before it falls back to all times
    res = asker.ask("What happened last Tuesday?")
    assert "nothing is dated 'last Tuesday'; searched all times instead" in res.notes and not res.empty
    res = asker.ask("What happened last blue moon?")
    assert any("could not resolve the time expression 'last blue moon'" in n for n in res.notes)
    assert not res.empty
    # "before <event>": dated through the evidence that mentions it
    res = asker.ask("What did Anna like before my car broke down?", user_id=home["tom"])
    assert res.time is not None and res.time.until == ts("2024-07-02T18:00:00")
    assert home["climbing"] not in {e.fact_id for e in res.evidence}
    with pytest.raises(InputError):
        parse_as_of("next thursday-ish")


def test_find_time_windows() -> None:
    wed = ts("2023-05-10T12:00:00")
    assert (find_time("what did I do last Tuesday?", wed).since, find_time("last Tuesday", wed).until) == (
        ts("2023-05-09"),
        ts("2023-05-10") - 1e-3,
    )
    before = find_time("where did she live before May 2023?", wed)
    assert before.since is None and before.until == ts("2023-05-01")
    assert find_time("in 2022", wed).since == ts("2022-01-01")
    assert find_time("what in March", wed).since == ts("2023-03-01")
    assert find_time("what in June", wed).since == ts("2022-06-01")  # the last June before the reference


def test_find_time_of_day_narrows_the_day() -> None:
    wed = ts("2023-05-10T12:00:00")
    dated = find_time("Who did I talk to at 22:15 on 8 May 2023?", wed)
    assert (dated.text, dated.since, dated.until) == (
        "at 22:15 on 8 May 2023",
        ts("2023-05-08T22:15:00"),
        ts("2023-05-08T22:16:00") - 1e-3,
    )
    assert find_time("what was said at 10:15 pm?", wed).since == ts("2023-05-10T22:15:00")  # the reference day
    around = find_time("around 9 am yesterday", wed)
    assert (around.since, around.until) == (ts("2023-05-09T08:30:00"), ts("2023-05-09T10:30:00") - 1e-3)
    assert find_time("at 12 am", wed).since == ts("2023-05-10T00:00:00")
    # Not a time of day, or not on one day: noted as unresolved, the rest of the window kept.
    assert find_time("at 25:00", wed).unresolved == "at 25:00"
    week = find_time("last week at 10 pm", wed)
    assert week.unresolved == "at 10 pm" and week.since == ts("2023-05-01")
    assert find_time("at 10 pm", None).unresolved == "at 10 pm"
    street = find_time("we met at 10 Downing Street", wed)
    assert (street.text, street.since, street.until, street.unresolved) == ("", None, None, "")


def test_a_time_of_day_finds_that_conversation(store: MemoryStore, cache: EmbeddingCache) -> None:
    said = {"10:00": "The plumber fixed the kitchen sink.", "10:20": "The plumber comes back on Friday."}
    eps = {}
    for hhmm, text in said.items():
        start = ts(f"2024-05-07T{hhmm}:10")
        ep = Episode(start=start, end=start + 40, user_transcript=encode_turns([EpisodeTurn("Tom", text)]))
        eps[hhmm] = store.add_episode(ep).id
    for hhmm in said:
        res = Asker(store, cache).ask(f"What did the plumber do at {hhmm}?")
        assert res.time is not None and res.time.text == f"at {hhmm}"
        assert [e.episode_id for e in res.evidence] == [eps[hhmm]]
    res = Asker(store, cache).ask("What did the plumber do at 23:00?")  # nothing then: all times, said so
    assert "nothing is dated 'at 23:00'; searched all times instead" in res.notes and len(res.evidence) == 2


def test_multi_round_follows_people_named_in_evidence(
    store: MemoryStore, home: dict[str, str], cache: EmbeddingCache
) -> None:
    # The question names nobody; the turn found names Anna; round 2 searches Anna's facts.
    res = Asker(store, cache, AskConfig(max_rounds=3)).ask("Who went to Lisbon and what do they like?")
    assert res.rounds >= 2
    linked = [e for e in res.evidence if e.kind == "fact" and e.via.startswith("person in evidence")]
    assert not linked or all(e.person_id == home["anna"] for e in linked)
    single = Asker(store, cache, AskConfig(max_rounds=1)).ask("Who went to Lisbon and what do they like?")
    assert single.rounds == 1 and single.stopped == "max rounds"


class MockAnswerLLM(LLMProvider):
    """A mock LLM provider, for the plumbing only: records the `answer` payload, replies
    with the first evidence item's text (or fails, to test the fallback)."""

    name = "mock"

    def __init__(self, fail: bool = False) -> None:
        super().__init__()
        self.fail = fail
        self.payloads: list[AnswerInput] = []

    def run(self, task: str, payload: BaseModel, schema: type[T]) -> T:
        assert task == "answer" and isinstance(payload, AnswerInput)
        self.payloads.append(payload)
        if self.fail:
            raise LLMError("malformed JSON", "mock failure")
        return schema.model_validate({"answer": f"She likes {payload.evidence[0].text}.", "used": [1]})


def test_answer_from_a_language_model_and_its_fallback(
    store: MemoryStore, home: dict[str, str], cache: EmbeddingCache
) -> None:
    llm = MockAnswerLLM()
    res = Asker(store, cache, llm=llm).ask("What does my sister like?", user_id=home["tom"])
    sent = llm.payloads[0]
    assert res.answered_by == "llm:mock" and res.answer == f"She likes {sent.evidence[0].text}."
    assert sent.question == "What does my sister like?" and sent.asking_user == "Tom"
    assert [e.n for e in sent.evidence] == list(range(1, len(res.evidence) + 1))
    assert any(e.text == "likes green tea" and e.who == "Anna" and e.when == "2024-05-07" for e in sent.evidence)
    failing = MockAnswerLLM(fail=True)
    res = Asker(store, cache, llm=failing).ask("What does my sister like?", user_id=home["tom"])
    assert res.answered_by == "evidence" and any("did not answer (malformed JSON)" in n for n in res.notes)
    res = Asker(store, cache, AskConfig(llm=False), llm=MockAnswerLLM()).ask("What does Anna like?")
    assert res.answered_by == "evidence"


def _ask(store: MemoryStore, cache: EmbeddingCache, question: str, weight: float, fold: bool) -> AskResult:
    fusion = FactFusion(facts_weight=weight, fold_facts=fold)
    return Asker(store, cache, AskConfig(max_rounds=1), fusion=fusion).ask(question)


def _lisbon_fact(store: MemoryStore, home: dict[str, str]) -> str:
    """A fact extracted from Anna's Lisbon turn (its quoted words are in turn 0 of May's episode)."""
    fact = Fact(
        user_id=home["anna"],
        text="travelled to Lisbon",
        valid_from=ts("2024-05-07T10:05:00"),
        source_episode=home["may"],
        source_text="I just got back from Lisbon",
    )
    store.add_fact(fact)
    return fact.id


def test_a_fact_knows_its_source_turn_and_folds_into_it(
    store: MemoryStore, home: dict[str, str], cache: EmbeddingCache
) -> None:
    lisbon = _lisbon_fact(store, home)
    question = "Who was in Lisbon?"
    apart = _ask(store, cache, question, 1.0, False)
    fact = next(e for e in apart.evidence if e.fact_id == lisbon)
    assert fact.source_turn == 0  # the turn that holds "I just got back from Lisbon"
    turn_key = f"turn:{home['may']}:0"
    turn = next(e for e in apart.evidence if e.key == turn_key)
    # Folded: the source turn takes the better of the two places; one statement keeps one slot.
    folded = _ask(store, cache, question, 1.0, True)
    keys = [e.key for e in folded.evidence]
    assert f"fact:{lisbon}" not in keys and turn_key in keys
    assert next(e for e in folded.evidence if e.key == turn_key).score == pytest.approx(
        max(turn.score, fact.score), abs=2e-6
    )
    # A fact with no source words, or words no turn holds, has no source turn and stays an item of its own.
    assert all(e.source_turn is None for e in folded.evidence if e.kind == "fact")


def test_facts_weight_ranks_extracted_memory_against_turns(
    store: MemoryStore, home: dict[str, str], cache: EmbeddingCache
) -> None:
    _lisbon_fact(store, home)
    question = "Who was in Lisbon?"
    even = _ask(store, cache, question, 1.0, False)
    low = _ask(store, cache, question, 0.25, False)
    facts = {e.key: e.score for e in even.evidence if e.kind == "fact"}
    assert facts
    for e in low.evidence:
        if e.kind == "fact":
            assert e.score == pytest.approx(facts[e.key] * 0.25, abs=2e-6)
    # The turns keep their scores, so every fact now ranks below the best turn.
    best_turn = max(e.score for e in low.evidence if e.kind == "turn")
    assert best_turn == max(e.score for e in even.evidence if e.kind == "turn")
    assert all(e.score < best_turn for e in low.evidence if e.kind == "fact")


def test_relations_are_scaled_like_facts_so_the_answer_outranks_the_link(
    store: MemoryStore, cache: EmbeddingCache
) -> None:
    """What does my sister like? The relation only says who she is; her fact answers. Scaling
    facts alone against turns put the relation first (CI caught it through the REST and MCP tests)."""
    tom, anna = store.create_user("Tom").id, store.create_user("Anna").id
    store.add_relation(Relation(subject_id=tom, relation="sister", object_id=anna))
    store.add_fact(Fact(user_id=anna, text="likes green tea"))
    for config in (AskConfig(llm=False), AskConfig(llm=False, facts_weight=1.0, fold_facts=False)):
        res = Asker(store, cache, config).ask("What does my sister like?", user_id=tom)
        assert [e.kind for e in res.evidence[:2]] == ["fact", "relation"]
        assert res.evidence[0].quote == "likes green tea"
