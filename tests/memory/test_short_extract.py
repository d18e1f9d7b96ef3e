"""The short form of the `extract` task (prompt version 3): numbered lines in, short keys and
turn numbers out. A well-formed answer becomes the same items as the long form, with the
source sentence taken from the named turn; an item that cannot be placed is dropped; an
answer that is not the short JSON (garbage, cut off, the wrong shape) writes nothing false.

The chat backend here is a stand-in (plumbing only): it returns a fixed answer text and
records the prompts it was sent, so the real prompt files and the real parsing run."""

from __future__ import annotations

from typing import Any

import pytest

from egomem.identity.types import Identification, IdentityStatus
from egomem.llm.base import ChatProvider, ChatReply, LLMError
from egomem.memory.extractor import MemoryExtractor, says_something_personal
from egomem.memory.items import SessionText, Turn
from egomem.memory.manager import MemoryManager
from egomem.memory.rules_provider import RulesProvider
from egomem.memory.short_extract import ShortExtraction, ShortItem, expand, source_sentence, to_short
from egomem.store.sqlite import SQLiteStore

T0 = 1_700_000_000.0

SESSION = SessionText(
    episode_id="ep-short",
    start=T0,
    end=T0 + 60,
    date="14 November 2023",
    turns=[
        Turn(speaker="user", text="Hi, I'm Lena. I teach math at Hill School."),
        Turn(speaker="assistant", text="Nice to meet you, Lena! I love jazz."),
        Turn(speaker="user", text="Is it cold today? My brother Jonas is a pilot. I stopped eating meat."),
    ],
)


class _FixedChat(ChatProvider):
    """Plumbing stand-in for a chat model: answers every task with `answer`."""

    name = "fixed"

    def __init__(self, answer: str, prompt_version: int = 3) -> None:
        super().__init__(prompt_version=prompt_version)
        self.answer = answer
        self.sent: list[list[dict[str, str]]] = []

    def chat(self, messages: list[dict[str, str]], json_schema: dict[str, Any], schema_name: str) -> ChatReply:
        self.sent.append(messages)
        return ChatReply(self.answer, prompt_tokens=100, completion_tokens=len(self.answer) // 4)


GOOD = (
    '{"name": "Lena", "items": ['
    '{"k": "fact", "t": "works as a math teacher", "u": 1},'
    '{"k": "rel", "t": "", "u": 2, "r": "brother", "p": "Jonas"},'
    '{"k": "pref", "t": "eats meat", "u": 2, "x": true}],'
    '"summary": "On 14 November 2023, Lena talked about her job and her brother."}'
)


def test_the_model_sees_numbered_user_lines_and_the_assistant_marked() -> None:
    short = to_short(SESSION)
    assert short.lines == [
        "U1: Hi, I'm Lena. I teach math at Hill School.",
        "A: Nice to meet you, Lena! I love jazz.",
        "U2: Is it cold today? My brother Jonas is a pilot. I stopped eating meat.",
    ]
    assert "episode_id" not in short.model_dump()  # an id the model does not need
    chat = _FixedChat(GOOD)
    MemoryExtractor(chat).extract(SESSION)
    system, user = chat.sent[0][0]["content"], chat.sent[0][1]["content"]
    assert "\"U1: Hi, I'm Lena." in user and "never the subject" in system


def test_a_short_answer_becomes_items_with_their_source_sentence() -> None:
    res = MemoryExtractor(_FixedChat(GOOD)).extract(SESSION)
    items = [it for it in res.items if it.kind != "summary"]
    got = {(it.kind, it.text, it.source_text, it.relation, it.person, it.retract) for it in items}
    assert got == {
        ("name", "Lena", "Hi, I'm Lena.", "", "", False),
        ("fact", "works as a math teacher", "I teach math at Hill School.", "", "", False),
        ("relation", "has a brother named Jonas", "My brother Jonas is a pilot.", "brother", "Jonas", False),
        ("preference", "eats meat", "I stopped eating meat.", "", "", True),
    }
    assert [it.text for it in res.items if it.kind == "summary"] == [
        "On 14 November 2023, Lena talked about her job and her brother."
    ]
    assert res.dropped == []


def test_items_that_cannot_be_placed_are_dropped() -> None:
    short = ShortExtraction(
        name="Robo",  # never said by the user: no name item
        items=[
            ShortItem(k="fact", t="likes jazz", u=0),  # no such user line (the assistant said it)
            ShortItem(k="pref", t="likes jazz", u=1),  # a user line that does not say it
            ShortItem(k="fact", t="works as a pilot", u=7),  # past the last line
            ShortItem(k="fact", t="  ", u=1),  # empty text
            ShortItem(k="rel", t="", u=2, r="brother", p=""),  # a relation without a person
            ShortItem(k="rel", t="", u=2, r="", p="Jonas"),  # ... or without a relation word
        ],
    )
    assert expand(short, SESSION) == []


def test_an_item_the_user_did_not_say_is_still_refused_by_provenance() -> None:
    bad = '{"name": "", "items": [{"k": "fact", "t": "teaches math at Lisbon School", "u": 1}], "summary": ""}'
    res = MemoryExtractor(_FixedChat(bad)).extract(SESSION)
    assert res.items == [] and [why for _, why in res.dropped] == ["'Lisbon' was not said"]


def test_the_source_is_the_matching_statement_of_the_turn() -> None:
    turn = "Is it cold today? My brother Jonas is a pilot. I stopped eating meat."
    assert source_sentence(turn, "eats meat") == "I stopped eating meat."
    assert source_sentence(turn, "has a brother named Jonas Jonas") == "My brother Jonas is a pilot."
    assert source_sentence("I love hiking.", "likes to hike") == "I love hiking."
    # Nothing in common: the item was not said on that line.
    assert source_sentence(turn, "likes jazz") == ""


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("not json at all", "malformed JSON"),
        ('{"name": "Lena", "items": [{"k": "fact", "t": "works as a', "malformed JSON"),  # cut off
        ('{"items": [{"kind": "fact", "text": "x", "source_text": "y"}]}', "wrong JSON shape"),  # the long form
        ('{"items": [{"k": "job", "t": "nurse", "u": 1}]}', "wrong JSON shape"),  # unknown kind
        ("[]", "wrong JSON shape"),
    ],
)
def test_a_bad_answer_is_an_llm_error(answer: str, reason: str) -> None:
    with pytest.raises(LLMError) as err:
        MemoryExtractor(_FixedChat(answer)).extract(SESSION)
    assert err.value.reason == reason


def test_a_bad_answer_writes_nothing_false(store: SQLiteStore, encoder: Any) -> None:
    # Without a fallback: the session is a failed episode, memory is untouched.
    out = MemoryManager(store, _FixedChat("garbage {"), encoder).process(SESSION)
    assert not out.ok and out.reason == "malformed JSON"
    assert store.list_users() == [] and store.get_episode("ep-short").status == "failed:malformed JSON"
    # With the rules as fallback: only what the rules find, and the episode says why.
    out = MemoryManager(store, _FixedChat("garbage {"), encoder, fallback=RulesProvider()).process(SESSION)
    assert out.ok and store.get_episode("ep-short").status == "done:fallback(malformed JSON)"
    facts = [f.text for f in store.list_facts(out.user_id or "")]
    assert "likes jazz" not in facts and all("Lisbon" not in f for f in facts)


def test_no_model_call_for_an_update_when_memory_holds_no_facts(store: SQLiteStore, encoder: Any) -> None:
    chat = _FixedChat(GOOD)
    out = MemoryManager(store, chat, encoder).process(SESSION, Identification(IdentityStatus.NEW))
    assert out.ok and chat.usage.calls == 1  # the extraction only
    # The fact, the summary and the relation (linked by graph code); the retraction closes nothing.
    assert sorted(op for op, _, _ in out.applied.ops) == ["ADD", "ADD", "ADD", "NOOP"]


def test_a_session_with_nothing_personal_skips_the_model() -> None:
    chitchat = SessionText(
        episode_id="ep-chat",
        start=T0,
        end=T0 + 10,
        date="14 November 2023",
        turns=[Turn(speaker="user", text="What time is it?"), Turn(speaker="user", text="Thanks, bye.")],
    )
    assert not says_something_personal(chitchat) and says_something_personal(SESSION)
    chat = _FixedChat(GOOD)
    MemoryExtractor(chat, supplement=RulesProvider()).extract(chitchat)
    assert chat.usage.calls == 0
    MemoryExtractor(chat, supplement=RulesProvider()).extract(SESSION)
    assert chat.usage.calls == 1
