"""Memory is about the person: nothing with the assistant as its subject is stored, whichever
extractor wrote it, and what the post-check refused is on the episode's log; the assistant's
lines reach a model marked as the robot's."""

from __future__ import annotations

import json
from typing import Any

import pytest

from egomem.identity.types import Identification, IdentityStatus
from egomem.llm.base import ChatProvider, ChatReply
from egomem.memory.about_person import ABOUT_ASSISTANT, SAID_IN_JEST, check_items
from egomem.memory.assistant_subject import about_assistant, without_assistant
from egomem.memory.items import ASSISTANT_LABEL, ExtractedItem, SessionText, Turn
from egomem.memory.manager import MemoryManager
from egomem.memory.rules_provider import RulesProvider
from egomem.schemas import FactKind
from egomem.store.sqlite import SQLiteStore

T0 = 1_700_000_000.0


@pytest.mark.parametrize(
    "text",
    [
        "Assistant talked about their job and their name.",
        "the assistant asked the user for their name, but the user did not respond.",
        "The user said hello. The assistant greeted them back.",
        "The AI explained how it works",
        "On 3 May 2024, the assistant asked Lena about her job.",  # a date before the subject
        "Lena talked about her job, and the robot asked about her family.",
        "asked the user for their name",  # a subjectless fact whose object is the user
        "Robot: what is your name?",
    ],
)
def test_the_assistant_as_a_subject_is_found(text: str) -> None:
    assert about_assistant(text)


@pytest.mark.parametrize(
    "text",
    [
        "The user asked the assistant to find a movie.",
        "Diane lives in New Jersey.",
        "works as an assistant manager",  # the word, not the subject
        "She works as an assistant manager.",
        "assistant manager at a supermarket",  # a job a model wrote without its verb
        "On 25 November 2026, the user talked with the assistant.",
        "Lena told the assistant about her new job.",
        "asked her boss for a raise",
    ],
)
def test_the_person_as_the_subject_is_not(text: str) -> None:
    assert not about_assistant(text)


def test_a_summary_is_rewritten_by_deleting_only_what_the_assistant_did() -> None:
    mixed = "On 3 May 2024, Lena talked about her job, and the assistant asked about her family. She has a dog."
    assert without_assistant(mixed) == "On 3 May 2024, Lena talked about her job. She has a dog."
    # The assistant alone, or a compound subject that cannot be cut cleanly: nothing is left.
    assert without_assistant("Assistant talked about their job and their name.") == ""
    assert without_assistant("the assistant asked the user for their name, but the user did not respond.") == ""
    assert without_assistant("On 3 May, Emily and the assistant talked about tennis.") == ""
    assert without_assistant("Lena likes jazz. The assistant asked her name.") == "Lena likes jazz."


def _session(*lines: tuple[str, str], ep: str = "e1") -> SessionText:
    turns = [Turn(speaker="user" if who == "user" else "assistant", text=text) for who, text in lines]
    return SessionText(episode_id=ep, start=T0, end=T0 + 60, date="14 November 2023", turns=turns)


class CannedChatModel(ChatProvider):
    """Plumbing mock of a chat model (OpenAI-compatible or local): the real prompt rendering and
    answer parsing run; `chat` records the prompt and answers a fixed, bad extraction."""

    name = "canned"

    def __init__(self, items: list[dict[str, Any]]) -> None:
        super().__init__(prompt_version=2)
        self.items = items
        self.prompts: list[str] = []
        self.rules = RulesProvider()

    def chat(self, messages: list[dict[str, str]], json_schema: dict[str, Any], schema_name: str) -> ChatReply:
        self.prompts.append(messages[-1]["content"])
        return ChatReply(json.dumps({"items": self.items}))

    def run(self, task: str, payload: Any, schema: Any) -> Any:
        if task == "update":  # the update agent is not what this test is about: the rules decide
            return self.rules.run(task, payload, schema)
        return super().run(task, payload, schema)


SAID = (
    ("assistant", "Hello! What's your name?"),
    ("user", "I'm Lena. I work as a nurse."),
    ("assistant", "Nice to meet you, Lena. I'm a robot and I work here as a receptionist."),
    ("user", "I live in Lyon."),
)
BAD_ANSWER = [
    {"kind": "name", "text": "Lena", "source_text": "I'm Lena"},
    {"kind": "fact", "text": "works as a nurse", "source_text": "I work as a nurse"},
    {"kind": "fact", "text": "lives in Lyon", "source_text": "I live in Lyon"},
    # The robot's words taken for the person's, quoting the person to pass provenance:
    {"kind": "fact", "text": "The assistant works as a receptionist", "source_text": "I work as a nurse"},
    {"kind": "fact", "text": "asked the user for their name", "source_text": "I'm Lena"},
    {"kind": "summary", "text": "Assistant talked about their job and their name.", "source_text": "x"},
]


def test_nothing_about_the_assistant_is_stored_the_persons_facts_are(store: SQLiteStore, encoder: Any) -> None:
    model = CannedChatModel(BAD_ANSWER)
    out = MemoryManager(store, model, encoder).process(_session(*SAID))
    assert out.ok and out.user_id
    # The prompt marks the assistant's lines as the robot's.
    assert ASSISTANT_LABEL in model.prompts[0] and '"speaker": "user"' in model.prompts[0]
    stored = [f.text for f in store.list_facts(out.user_id)]
    assert sorted(t for t in stored if not t.startswith("On ")) == ["lives in Lyon", "works as a nurse"]
    assert not [t for t in stored if about_assistant(t)]
    episode = store.get_episode("e1")
    assert episode.summary == "" and store.get_user(out.user_id).name == "Lena"
    # What was refused is on the episode's log and in the outcome (the agent's timeline reads it).
    log = next(h.cause for h in store.history() if h.entity == "episode")
    assert "'The assistant works as a receptionist': about the assistant" in log
    assert {c.item.text for c in out.checked} == {
        "The assistant works as a receptionist",
        "asked the user for their name",
        "Assistant talked about their job and their name.",
    }
    assert all(c.why == ABOUT_ASSISTANT for c in out.checked)


def test_a_mixed_summary_keeps_the_persons_part(store: SQLiteStore, encoder: Any) -> None:
    summary = "On 14 November 2023, Lena talked about her job, and the assistant asked where she lives."
    model = CannedChatModel([{"kind": "summary", "text": summary, "source_text": "x"}])
    out = MemoryManager(store, model, encoder).process(_session(*SAID))
    assert store.get_episode("e1").summary == "On 14 November 2023, Lena talked about her job."
    assert [c.replaced_by.text for c in out.checked if c.replaced_by] == [store.get_episode("e1").summary]


def test_the_rules_summary_with_the_assistant_as_object_is_kept(store: SQLiteStore, encoder: Any) -> None:
    out = MemoryManager(store, RulesProvider(), encoder).process(_session(*SAID))
    assert out.checked == []
    summary = store.get_episode("e1").summary
    assert summary.startswith("On 14 November 2023, Lena talked with the assistant.") and not about_assistant(summary)


def test_the_check_spares_names_relations_and_retractions() -> None:
    items = [
        ExtractedItem(kind="name", text="Robot", source_text="call me Robot"),
        ExtractedItem(kind="relation", text="has a friend named Ana", source_text="x", relation="friend", person="Ana"),
        ExtractedItem(kind="preference", text="likes tennis", source_text="x", retract=True),
    ]
    kept, changed = check_items(items, _session(("user", "I'd like to learn tennis.")))
    assert kept == items and changed == []


def test_turns_are_marked_and_round_trip() -> None:
    s = _session(*SAID)
    dumped = s.model_dump_json()
    assert dumped.count(ASSISTANT_LABEL) == 2 and dumped.count('"speaker":"user"') == 2
    assert SessionText.model_validate_json(dumped) == s
    other = Turn(speaker="other", text="hi")
    assert Turn.model_validate(other.model_dump()) == other and "other person" in other.model_dump()["speaker"]


def test_a_known_user_keeps_their_memory_untouched_by_the_assistant(store: SQLiteStore, encoder: Any) -> None:
    uid = store.create_user("Lena").id
    known = Identification(status=IdentityStatus.KNOWN, user_id=uid)
    model = CannedChatModel(
        [{"kind": "preference", "text": "The assistant likes jazz", "source_text": "I live in Lyon"}]
    )
    MemoryManager(store, model, encoder).process(_session(*SAID), known)
    assert [f for f in store.list_facts(uid) if f.kind != FactKind.SUMMARY] == []


def test_what_was_taken_back_as_a_joke_is_dropped_and_the_rest_kept() -> None:
    joke = "I'm actually a secret agent. Ha, no, just joking."
    session = _session(
        ("user", joke), ("user", "My wife is a robot."), ("user", "Just kidding!"), ("user", "I'm a nurse.")
    )
    items = [
        ExtractedItem(kind="fact", text="works as a secret agent", source_text="I'm actually a secret agent."),
        ExtractedItem(kind="fact", text="has a wife who is a robot", source_text="My wife is a robot."),
        ExtractedItem(kind="fact", text="works as a nurse", source_text="I'm a nurse."),
    ]
    kept, checked = check_items(items, session)
    assert [it.text for it in kept] == ["works as a nurse"]
    assert all(c.why == SAID_IN_JEST and c.replaced_by is None for c in checked) and len(checked) == 2
