"""The OpenAI-compatible backend against a real loopback server with recorded answers.
This checks the protocol and failure handling, not any model's quality."""

from __future__ import annotations

import json
from typing import Any

import pytest

from egomem.config import load_config
from egomem.errors import ConfigError
from egomem.llm import LLMError, create_provider
from egomem.llm.base import PromptTooLong
from egomem.llm.local import LocalLLMProvider
from egomem.llm.openai_compat import OpenAICompatProvider
from egomem.memory.items import Extraction, SessionText, Turn
from egomem.registry import registry

SESSION = SessionText(
    episode_id="e1",
    start=1_700_000_000.0,
    end=1_700_000_300.0,
    date="14 November 2023",
    turns=[Turn(speaker="user", text="I'm Ana and I live in Porto."), Turn(speaker="assistant", text="Hi Ana!")],
)
GOOD = json.dumps(
    {
        "items": [
            {"kind": "name", "text": "Ana", "source_text": "I'm Ana"},
            {"kind": "fact", "text": "lives in Porto", "source_text": "I live in Porto"},
        ]
    }
)


def _provider(url: str, **kw: Any) -> OpenAICompatProvider:
    kw.setdefault("backoff_s", 0.01)
    return OpenAICompatProvider(url, "recorded-model", api_key="sk-test", **kw)


def test_request_shape_and_token_accounting(chat_server: Any) -> None:
    Scripted = chat_server.Scripted

    chat_server.script = [Scripted(content=GOOD), Scripted(content=GOOD)]
    p = _provider(chat_server.base_url)
    out = p.run("extract", SESSION, Extraction)
    p.run("extract", SESSION, Extraction)
    assert [i.text for i in out.items] == ["Ana", "lives in Porto"]
    req = chat_server.requests[0]
    assert req["model"] == "recorded-model"
    assert req["response_format"]["type"] == "json_schema"
    assert req["response_format"]["json_schema"]["schema"]["title"] == "Extraction"
    assert req["messages"][0]["role"] == "system" and "I live in Porto" in req["messages"][1]["content"]
    assert chat_server.headers[0]["Authorization"] == "Bearer sk-test"
    assert (p.usage.calls, p.usage.prompt_tokens, p.usage.completion_tokens, p.usage.total_tokens) == (2, 200, 40, 240)


def test_retries_on_500_then_succeeds(chat_server: Any) -> None:
    Scripted = chat_server.Scripted

    chat_server.script = [Scripted(status=500, raw="boom"), Scripted(status=503, raw="busy"), Scripted(content=GOOD)]
    p = _provider(chat_server.base_url, max_retries=3)
    assert len(p.run("extract", SESSION, Extraction).items) == 2
    assert len(chat_server.requests) == 3 and p.usage.retries == 2


def test_retries_on_timeout_then_succeeds(chat_server: Any) -> None:
    Scripted = chat_server.Scripted

    chat_server.script = [Scripted(content=GOOD, delay_s=0.6), Scripted(content=GOOD)]
    p = _provider(chat_server.base_url, timeout_s=0.2, max_retries=1)
    assert len(p.run("extract", SESSION, Extraction).items) == 2
    assert p.usage.retries == 1


def test_gives_up_after_retries_with_reason(chat_server: Any) -> None:
    Scripted = chat_server.Scripted

    chat_server.script = [Scripted(status=500, raw="boom")] * 3
    p = _provider(chat_server.base_url, max_retries=2)
    with pytest.raises(LLMError) as e:
        p.run("extract", SESSION, Extraction)
    assert e.value.reason == "endpoint HTTP 500" and "after 3 attempts" in str(e.value)
    assert p.usage.failures == 1


def test_client_error_is_not_retried(chat_server: Any) -> None:
    Scripted = chat_server.Scripted

    chat_server.script = [Scripted(status=401, raw='{"error": "bad key"}'), Scripted(content=GOOD)]
    with pytest.raises(LLMError, match="HTTP 401"):
        _provider(chat_server.base_url).run("extract", SESSION, Extraction)
    assert len(chat_server.requests) == 1


@pytest.mark.parametrize(
    "body",
    [
        '{"error": {"message": "This model\'s maximum context length is 4096 tokens. However, you requested 5000"}}',
        '{"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it"}}',
        '{"error": {"code": "context_length_exceeded"}}',
    ],
)
def test_a_prompt_longer_than_the_servers_context_is_prompt_too_long(chat_server: Any, body: str) -> None:
    chat_server.script = [chat_server.Scripted(status=400, raw=body)]
    with pytest.raises(PromptTooLong):
        _provider(chat_server.base_url).run("extract", SESSION, Extraction)
    assert len(chat_server.requests) == 1  # not retried: the extractor cuts the session instead


@pytest.mark.parametrize(
    ("content", "raw", "reason"),
    [
        ("{'items': [", None, "malformed JSON"),
        ('{"items": [{"kind": "shoe", "text": "x", "source_text": "y"}]}', None, "wrong JSON shape"),
        ('{"facts": []}', None, "wrong JSON shape"),
        (None, "<html>not json</html>", "malformed chat response"),
        (None, '{"choices": []}', "malformed chat response"),
    ],
)
def test_bad_answers_are_clear_errors(chat_server: Any, content: str | None, raw: str | None, reason: str) -> None:
    Scripted = chat_server.Scripted

    chat_server.script = [Scripted(content=content, raw=raw)]
    with pytest.raises(LLMError) as e:
        _provider(chat_server.base_url).run("extract", SESSION, Extraction)
    assert e.value.reason == reason


def test_fenced_json_is_accepted(chat_server: Any) -> None:
    Scripted = chat_server.Scripted

    chat_server.script = [Scripted(content="```json\n" + GOOD + "\n```")]
    assert len(_provider(chat_server.base_url).run("extract", SESSION, Extraction).items) == 2


def test_an_answer_the_server_cut_off_keeps_its_complete_items(chat_server: Any) -> None:
    Scripted = chat_server.Scripted
    cut = GOOD[: GOOD.index('{"kind": "fact"') + 20]  # the name item complete, the fact item not
    chat_server.script = [
        Scripted(content=cut, finish_reason="length"),
        Scripted(content=cut[:12], finish_reason="length"),
    ]
    p = _provider(chat_server.base_url)
    assert [(i.kind, i.text) for i in p.run("extract", SESSION, Extraction).items] == [("name", "Ana")]
    with pytest.raises(LLMError) as err:  # no complete item: nothing stands
        p.run("extract", SESSION, Extraction)
    assert err.value.reason == "answer cut off"
    assert (p.usage.cut_short_kept, p.usage.failures) == (1, 1)


def test_endpoint_down(free_port_url: str) -> None:
    p = _provider(free_port_url, max_retries=1)
    with pytest.raises(LLMError) as e:
        p.run("extract", SESSION, Extraction)
    assert e.value.reason == "endpoint unreachable"


def test_factory_and_config_errors(tmp_path: Any) -> None:
    llm = registry("llm")
    assert create_provider(llm.parse_config("rules")).name == "rules"
    with pytest.raises(ConfigError, match="base_url"):
        create_provider(llm.parse_config("openai", {"model": "m"}))
    with pytest.raises(ConfigError, match=r"llm\.provider = 'gguf' is now local"):
        load_config(environ={"EGOMEM_LLM__PROVIDER": "gguf"})
    with pytest.raises(ConfigError, match=r"local \.gguf file"):
        LocalLLMProvider(tmp_path / "missing.gguf")
    fake = tmp_path / "m.gguf"
    fake.write_bytes(b"GGUF")
    try:
        import llama_cpp  # noqa: F401

        pytest.skip("llama-cpp-python is installed here")
    except ImportError:
        with pytest.raises(ConfigError, match=r"egomem\[gguf\]"):
            LocalLLMProvider(fake)
