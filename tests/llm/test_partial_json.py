"""An answer that stopped part-way (llm/partial_json.py, `complete_part` in llm/base.py): its
complete list elements stand for a schema that allows it, nothing else is made up."""

from __future__ import annotations

from typing import Any

import pytest

from egomem.llm.base import ChatProvider, ChatReply, LLMError, complete_part
from egomem.llm.local import before_loop, reply_from_completion
from egomem.llm.partial_json import closed_prefixes
from egomem.memory.items import Extraction, KnownFact, SessionText, Turn

NAME = '{"kind": "name", "text": "Ana", "source_text": "I am Ana"}'
FACT = '{"kind": "fact", "text": "works as a vet [sic] \\"here\\"", "source_text": "I work as a vet"}'


def test_the_cuts_are_after_each_complete_element_longest_first() -> None:
    text = '{"items": [' + NAME + ", " + FACT + ', {"kind": "fa'
    assert list(closed_prefixes(text)) == [
        '{"items": [' + NAME + ", " + FACT + "]}",
        '{"items": [' + NAME + "]}",
    ]
    # A bracket or an escaped quote inside a string is text, not structure.
    assert list(closed_prefixes('{"items": [{"text": "a ] \\" }"}')) == ['{"items": [{"text": "a ] \\" }"}]}']
    assert list(closed_prefixes('{"items": [{"kind": "na')) == []
    assert list(closed_prefixes("")) == []
    assert list(closed_prefixes('{"items": [' + NAME + "]} ]")) == ['{"items": [' + NAME + "]}"]


def test_a_prefix_answer_keeps_its_complete_items_and_only_those() -> None:
    part = complete_part('{"items": [' + NAME + ", " + FACT + ', {"kind": "fact", "te', Extraction, "answer looped")
    assert [it.text for it in part.items] == ["Ana", 'works as a vet [sic] "here"']
    # An element that does not validate is dropped with all after it, never patched.
    bad = '{"items": [' + NAME + ', {"kind": "joke", "text": "x", "source_text": "x"}, ' + FACT
    assert [it.text for it in complete_part(bad, Extraction, "answer cut off").items] == ["Ana"]


def test_nothing_complete_or_a_schema_without_prefix_answers_is_the_llm_error() -> None:
    with pytest.raises(LLMError) as err:
        complete_part('{"items": [{"kind": "na', Extraction, "answer cut off")
    assert err.value.reason == "answer cut off"
    with pytest.raises(LLMError, match="answer looped"):
        complete_part('[{"id": "1", "kind": "fact", "text": "x"}', KnownFact, "answer looped")


def _completion(content: str, finish: str) -> dict[str, Any]:
    return {"choices": [{"message": {"content": content}, "finish_reason": finish}], "usage": {}}


def test_a_looped_completion_is_cut_before_the_first_copy_of_its_block() -> None:
    block = ', {"kind": "fact", "text": "works as a user", "source_text": "I work"}'
    out = _completion('{"items": [' + NAME + block * 3, "looped")
    assert before_loop(out, block.encode()) == '{"items": [' + NAME
    assert before_loop(out, b"not the block") == ""  # text and tokens disagree: keep nothing
    reply = reply_from_completion(_completion("", "looped"))
    assert reply.cut_short == "answer looped" and reply.content == ""
    assert reply_from_completion(_completion('{"items": [', "length")).cut_short == "answer cut off"
    assert reply_from_completion(_completion('{"items": []}', "stop")).cut_short == ""


class _MockCutShort(ChatProvider):
    """A mock chat backend (plumbing only): answers with a fixed reply."""

    def __init__(self, reply: ChatReply) -> None:
        super().__init__()
        self.reply = reply

    def chat(self, messages: list[dict[str, str]], json_schema: dict[str, Any], schema_name: str) -> ChatReply:
        return self.reply


SESSION = SessionText(
    episode_id="e", start=0, end=1, date="3 March 2025", turns=[Turn(speaker="user", text="I am Ana")]
)


def test_plumbing_run_counts_a_kept_part_and_a_lost_one() -> None:
    kept = _MockCutShort(ChatReply('{"items": [' + NAME + ", {", cut_short="answer looped"))
    assert [it.text for it in kept.run("extract", SESSION, Extraction).items] == ["Ana"]
    assert (kept.usage.cut_short_kept, kept.usage.failures) == (1, 0)
    lost = _MockCutShort(ChatReply('{"items": [{', cut_short="answer looped"))
    with pytest.raises(LLMError, match="answer looped"):
        lost.run("extract", SESSION, Extraction)
    assert (lost.usage.cut_short_kept, lost.usage.failures) == (0, 1)
