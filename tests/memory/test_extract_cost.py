"""The cheaper extraction paths (docs/benchmarks/xcost.md): the short schema's numbered lines and
their expansion back into items, and the gate that skips the model for a session with nothing
personal in it. No model: a plumbing mock of a chat model answers with canned JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest

from egomem.llm.base import ChatProvider, ChatReply
from egomem.llm.prompts import render_prompt
from egomem.memory.compact import CompactExtraction, compact_session, expand, sentences
from egomem.memory.extractor import MemoryExtractor
from egomem.memory.gate import first_person_statements, worth_a_model
from egomem.memory.items import ExtractedItem, SessionText, Turn
from egomem.memory.rules_provider import RulesProvider


def _session(*lines: tuple[str, str]) -> SessionText:
    turns = [Turn(speaker=who, text=text) for who, text in lines]
    return SessionText(episode_id="e1", start=0.0, end=60.0, date="14 November 2023", turns=turns)


class CannedChatModel(ChatProvider):
    """Plumbing mock: the real prompt rendering and answer parsing run; `chat` counts the calls
    and answers a fixed JSON."""

    name = "canned"

    def __init__(self, answer: dict[str, Any]) -> None:
        super().__init__(prompt_version=2)
        self.answer = answer
        self.prompts: list[str] = []

    def chat(self, messages: list[dict[str, str]], json_schema: dict[str, Any], schema_name: str) -> ChatReply:
        self.prompts.append(messages[-1]["content"])
        return ChatReply(json.dumps(self.answer))


SAID = _session(
    ("assistant", "Hello! Who are you?"),
    ("user", "Hi, I'm Lena. I teach math at Hill School."),
    ("assistant", "Nice to meet you."),
    ("user", "My brother Jonas is a pilot. Is your name Robo?"),
)


def test_sentences_split_at_end_marks() -> None:
    assert sentences("Hi, I'm Lena. I teach math!  Is it? ok") == ["Hi, I'm Lena.", "I teach math!", "Is it?", "ok"]
    assert sentences("   ") == []


def test_compact_session_numbers_only_the_users_sentences() -> None:
    payload, said = compact_session(SAID)
    assert said == [
        "Hi, I'm Lena.",
        "I teach math at Hill School.",
        "My brother Jonas is a pilot.",
        "Is your name Robo?",
    ]
    assert payload.lines == [
        "assistant: Hello! Who are you?",
        "1 user: Hi, I'm Lena.",
        "2 user: I teach math at Hill School.",
        "assistant: Nice to meet you.",
        "3 user: My brother Jonas is a pilot.",
        "4 user: Is your name Robo?",
    ]


def test_expand_takes_the_source_from_the_numbered_line_and_drops_unknown_lines() -> None:
    answer = CompactExtraction.model_validate(
        {
            "items": [
                {"k": "fact", "s": 2, "t": "works as a math teacher"},
                {"k": "rel", "s": 3, "t": "has a brother named Jonas", "r": "brother", "p": "Jonas"},
                {"k": "pref", "s": 1, "t": "eats meat", "x": True},
                {"k": "fact", "s": 9, "t": "lives in Rome"},
                {"k": "fact", "s": 0, "t": "is tall"},
            ]
        }
    )
    _, said = compact_session(SAID)
    items, bad = expand(answer, said)
    assert [(i.kind, i.text, i.source_text) for i in items] == [
        ("fact", "works as a math teacher", "I teach math at Hill School."),
        ("relation", "has a brother named Jonas", "My brother Jonas is a pilot."),
        ("preference", "eats meat", "Hi, I'm Lena."),
    ]
    assert (items[1].relation, items[1].person) == ("brother", "Jonas") and items[2].retract
    assert [b.s for b in bad] == [9, 0]


def test_the_short_prompt_renders_with_its_payload() -> None:
    payload, _ = compact_session(SAID)
    system, user = render_prompt("extract_short", payload.model_dump_json(), 2)
    assert '"s"' in system and "2 user: I teach math at Hill School." in user


def test_short_schema_items_pass_the_same_provenance_checks() -> None:
    model = CannedChatModel(
        {
            "items": [
                {"k": "name", "s": 1, "t": "Lena"},
                {"k": "fact", "s": 2, "t": "works as a math teacher"},
                {"k": "fact", "s": 2, "t": "lives in Paris"},  # a place never said: dropped
                {"k": "rel", "s": 4, "t": "has a friend named Robo", "r": "friend", "p": "Robo"},  # a question
            ]
        }
    )
    out = MemoryExtractor(model, supplement=RulesProvider(), schema="short").extract(SAID)
    texts = {(i.kind, i.text) for i in out.items}
    assert ("name", "Lena") in texts and ("fact", "works as a math teacher") in texts
    assert not any("Paris" in t or "Robo" in t for _, t in texts)
    assert sum(i.kind == "summary" for i in out.items) == 1  # the rules' summary: the short schema has none
    assert len(model.prompts) == 1 and "1 user: Hi, I'm Lena." in model.prompts[0]


def test_first_person_statements_leave_out_questions_and_small_talk() -> None:
    s = _session(
        ("user", "Hey. What time is it? Do you know my friend Leo?"),
        ("assistant", "I am a robot."),
        ("user", "That's interesting. I'm back."),
    )
    assert first_person_statements(s) == ["I'm back."]
    assert first_person_statements(_session(("user", "Hey. Where does my cousin work?"))) == []


@pytest.mark.parametrize(
    ("said", "worth"),
    [
        ("Hello there. What's the weather like?", False),
        ("Goodbye for now.", False),
        ("I live in Manchester.", True),
        ("Chocolate is my favourite thing.", True),
        ("Everyone calls me Robert.", True),
    ],
)
def test_gate(said: str, worth: bool) -> None:
    assert worth_a_model(_session(("user", said)), []) is worth


def test_gate_passes_a_session_where_the_rules_found_something() -> None:
    item = ExtractedItem(kind="fact", text="lives in Oslo", source_text="Oslo is home")
    summary = ExtractedItem(kind="summary", text="talked", source_text="x")
    s = _session(("user", "Oslo is home."))
    assert worth_a_model(s, [item]) and not worth_a_model(s, [summary])


def test_gated_session_never_asks_the_model() -> None:
    model = CannedChatModel({"items": [{"kind": "fact", "text": "likes jazz", "source_text": "Hello there."}]})
    small_talk = _session(("user", "Hello there. What's the weather like?"))
    out = MemoryExtractor(model, supplement=RulesProvider(), gate=True).extract(small_talk)
    assert out.gated and model.prompts == [] and all(i.kind == "summary" for i in out.items)
    personal = _session(("user", "I love jazz."))
    out = MemoryExtractor(model, supplement=RulesProvider(), gate=True).extract(personal)
    assert not out.gated and len(model.prompts) == 1
