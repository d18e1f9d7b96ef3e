"""The cascaded dialog model against a real OpenAI-compatible HTTP server on 127.0.0.1.

PROTOCOL tests, not model quality: the server (tests/llm/conftest.py, which honours
`stop` like a real server) replays scripted answers. They check what goes into each
request (MemChunks in the system prompt, stop sequences, history), the two-phase `<retr>`
flow with the agent's parser and Level-2 refresh, and failure handling.
"""

from __future__ import annotations

import importlib.util
import logging
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from egomem.dialog.base import UserTurn
from egomem.dialog.cascaded import FALLBACK, CascadedChatModel, DialogPrompt, fill, split_query, spoken
from egomem.errors import ConfigError
from egomem.llm.openai_compat import OpenAICompatProvider
from egomem.providers import OpenAILLMConfig
from egomem.retrieval.query_parser import RetrParser
from egomem.schemas import MemChunk

_spec = importlib.util.spec_from_file_location(
    "egomem_tests_fake_openai", Path(__file__).parents[1] / "llm" / "conftest.py"
)
assert _spec is not None and _spec.loader is not None
fake_openai = sys.modules.setdefault(_spec.name, importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(fake_openai)
Scripted = fake_openai.Scripted

LEVEL1 = MemChunk(
    level=1,
    text="Current user: Emily\nFacts:\n- works as a nurse\nRelations:\n- John is her colleague",
    tokens=20,
    user_id="u_emily",
)
LEVEL2 = MemChunk(
    level=2, text="- John, colleague: John plays the saxophone in a jazz band", tokens=14, user_id="u_emily"
)
QUERY = "<retr>:\ncolleague, John\nplays, music<answer>"


@pytest.fixture
def server() -> Iterator[Any]:
    s = fake_openai.ChatServer()
    yield s
    s.close()


def _model(url: str, **kw: Any) -> CascadedChatModel:
    kw.setdefault("backoff_s", 0.01)
    kw.setdefault("max_retries", 0)
    return CascadedChatModel(OpenAICompatProvider(url, "recorded-model", **kw))


def _turn(text: str) -> UserTurn:
    return UserTurn(text, 1.0, 2.0, "u_emily")


def _system(req: dict[str, Any]) -> str:
    assert req["messages"][0]["role"] == "system"
    text: str = req["messages"][0]["content"]
    return text


def test_colleague_question_runs_the_two_phase_retr_flow(server: Any) -> None:
    # The recorded model writes the query and would go on past <answer>: the server cuts at `stop`.
    server.script = [
        Scripted(content=QUERY + "He plays golf."),
        Scripted(content="Yes, John plays sax in a jazz band."),
    ]
    model = _model(server.base_url)
    model.on_memchunk(LEVEL1)
    gen = model.on_user_turn(_turn("What does my colleague John do for fun?"))
    parser, said = RetrParser(), []
    queries = []
    for tok in gen:  # what the agent does: parse each token, refresh Level 2 before the next one
        said.append(tok)
        for q in parser.feed(tok):
            queries.append(q)
            assert len(server.requests) == 1  # the answer is not asked for before the refresh
            model.on_memchunk(LEVEL2)
    first, second = server.requests
    assert first["stop"] == ["<answer>"]
    assert "Current user: Emily" in _system(first) and "John is her colleague" in _system(first)
    assert "saxophone" not in _system(first)
    assert first["messages"][-1] == {"role": "user", "content": "What does my colleague John do for fun?"}
    assert "".join(said).startswith(QUERY)
    assert [(q.relation_words, q.keywords) for q in queries] == [(["colleague", "John"], ["plays", "music"])]
    assert "John plays the saxophone in a jazz band" in _system(second)
    assert "Current user: Emily" in _system(second)
    assert "<answer>" not in second.get("stop", [])
    assert "".join(said)[len(QUERY) :] == "Yes, John plays sax in a jazz band."
    assert "golf" not in "".join(said)


def test_answer_without_query_is_yielded_directly_and_history_is_kept(server: Any) -> None:
    server.script = [Scripted(content="Nice to hear, Emily!"), Scripted(content="You work as a nurse.")]
    model = _model(server.base_url)
    model.on_memchunk(LEVEL1)
    assert "".join(model.on_user_turn(_turn("I had a good day today."))) == "Nice to hear, Emily!"
    assert "".join(model.on_user_turn(_turn("What is my job?"))) == "You work as a nurse."
    assert len(server.requests) == 2
    msgs = server.requests[1]["messages"]
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"]
    assert msgs[2]["content"] == "Nice to hear, Emily!"
    assert "(nothing looked up)" in _system(server.requests[1])


def test_history_is_bounded_and_cleared_for_another_user(server: Any) -> None:
    server.script = [Scripted(content=f"Answer {i}.") for i in range(6)]
    model = CascadedChatModel(OpenAICompatProvider(server.base_url, "m", max_retries=0), history_turns=2)
    model.on_memchunk(LEVEL1)
    for i in range(5):
        list(model.on_user_turn(_turn(f"Question {i}?")))
    assert len(server.requests[4]["messages"]) == 1 + 4 + 1  # system, two exchanges, the turn
    model.on_memchunk(MemChunk(level=1, text="Current user: Tom", tokens=3, user_id="u_tom"))
    list(model.on_user_turn(_turn("Hello?")))
    assert [m["role"] for m in server.requests[5]["messages"]] == ["system", "user"]
    assert "Current user: Tom" in _system(server.requests[5]) and "Emily" not in _system(server.requests[5])


def test_endpoint_down_gives_the_fallback_line(caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    model = _model(url, max_retries=1)
    model.on_memchunk(LEVEL1)
    with caplog.at_level(logging.WARNING, logger="egomem.dialog.cascaded"):
        assert "".join(model.on_user_turn(_turn("How are you?"))) == FALLBACK
    assert "endpoint unreachable" in caplog.text
    assert list(model.proactive(3.0)) == []  # no greeting, no exception


def test_timeout_and_http_errors_give_the_fallback_line(server: Any) -> None:
    server.script = [Scripted(content="late", delay_s=0.5), Scripted(status=500, raw="boom")]
    model = _model(server.base_url, timeout_s=0.2)
    assert "".join(model.on_user_turn(_turn("Hello?"))) == FALLBACK
    assert "".join(model.on_user_turn(_turn("Hello again?"))) == FALLBACK


def test_endpoint_failing_after_the_query_still_answers_honestly(server: Any) -> None:
    server.script = [Scripted(content=QUERY), Scripted(status=400, raw="bad request")]
    model = _model(server.base_url)
    model.on_memchunk(LEVEL1)
    said = "".join(model.on_user_turn(_turn("Does my colleague like music?")))
    assert said == QUERY + FALLBACK


def test_greets_a_newly_arrived_user_once(server: Any) -> None:
    server.script = [Scripted(content="Hi Emily, good to see you again!")]
    model = _model(server.base_url)
    assert list(model.proactive(0.0)) == []  # nobody there yet: no request
    model.on_memchunk(LEVEL1)
    assert "".join(model.proactive(1.0)) == "Hi Emily, good to see you again!"
    req = server.requests[0]
    assert "Current user: Emily" in _system(req) and "has just appeared" in _system(req)
    assert req["messages"][-1]["role"] == "user"
    model.on_memchunk(LEVEL1.model_copy(update={"text": LEVEL1.text + "\n- likes tea"}))  # refresh, same user
    assert list(model.proactive(2.0)) == [] and len(server.requests) == 1
    server.script = [Scripted(content="Nice.")]
    list(model.on_user_turn(_turn("I'm fine.")))
    assert "likes tea" in _system(server.requests[1])
    assert [m["role"] for m in server.requests[1]["messages"]] == ["system", "user", "assistant", "user"]


def test_a_server_ignoring_stop_and_stray_markers(server: Any) -> None:
    server.script = [
        Scripted(content="Let me see. " + QUERY + "He plays golf.", ignore_stop=True),
        Scripted(content="He plays sax. <retr>:\nfriend\nx<answer>", ignore_stop=True),
        Scripted(content="Hello <answer>there <retr>", ignore_stop=True),
        Scripted(content="Hi! <retr>:\nfriend\nx", ignore_stop=True),
    ]
    model = _model(server.base_url)
    said = "".join(model.on_user_turn(_turn("What does my colleague do?")))
    assert said == QUERY + "He plays sax."
    assert "".join(model.on_user_turn(_turn("Hi"))) == "Hello"  # cut at <answer>, as `stop` would have
    model.on_memchunk(LEVEL1)
    assert "".join(model.proactive(0.0)) == "Hi!"


def test_prompt_file_and_slots() -> None:
    p = DialogPrompt.load(1)
    assert "<retr>:" in p.system and "{{level1}}" in p.system and p.greet and "{{keywords}}" in p.answer
    assert fill("a {{level1}} b {{level2}}", level1="{{level2}}", level2="x") == "a {{level2}} b x"
    assert spoken("ok <retr>:\nfriend") == "ok" and spoken("a <answer> b") == "a b"
    assert split_query("Sure. <retr>:\n\n<answer>x") == ("Sure. ", None)  # no terms: no query
    assert split_query("hi <answer> <retr>:\nfriend\nx") == ("hi ", None)
    head, q = split_query("<retr>:\nsister\ncar<answer>She")
    assert head == "" and q is not None and (q.relation_words, q.keywords) == (["sister"], ["car"])
    with pytest.raises(ConfigError):
        DialogPrompt.load(99)


def test_from_config_needs_an_endpoint() -> None:
    with pytest.raises(ConfigError):
        CascadedChatModel.from_config(OpenAILLMConfig())
    m = CascadedChatModel.from_config(OpenAILLMConfig(base_url="http://127.0.0.1:9/v1", model="m"))
    assert isinstance(m.llm, OpenAICompatProvider) and m.llm.max_retries == 1


class _ScriptedASR:
    """A fake transcriber: the agent's ASR step returns this text (turn detection is tested elsewhere)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def transcribe(self, audio: Any) -> str:
        return self.text


def test_inside_the_real_agent_loop(server: Any, store: Any) -> None:
    """The real EgoMem dialog path (user turn -> model -> <retr> parser -> Level-2 retrieval over
    the store -> on_memchunk -> answer) with the real retrieval process; identity is observed
    directly (no camera) and speech comes from a scripted transcriber."""
    from egomem.config import Config
    from egomem.identity.types import Identification, IdentityStatus
    from egomem.memory.manager import MemoryManager
    from egomem.memory.rules_provider import RulesProvider
    from egomem.memory.trigger.metrics import sessions
    from egomem.perception.vad import SileroVAD
    from egomem.retrieval.encoder import default_encoder
    from egomem.retrieval.process import RetrievalProcess
    from egomem.runtime.agent import Components, EgoMem
    from egomem.schemas import Fact, Relation

    emily, john = store.create_user("Emily"), store.create_user("John")
    store.add_relation(Relation(subject_id=emily.id, relation="colleague", object_id=john.id))
    store.add_fact(Fact(user_id=john.id, text="John loves tennis"))
    config = Config()
    encoder = default_encoder()
    retrieval = RetrievalProcess(store, encoder=encoder, config=config.retrieval)
    model = _model(server.base_url)
    parts = Components(
        store=store,
        retrieval=retrieval,
        model=model,
        transcriber=_ScriptedASR("does my colleague play any sport"),
        trigger=None,  # memory management is not run here
        sessions=sessions,
        manager=MemoryManager(store, RulesProvider(), encoder, config.memory),
        vad=SileroVAD(),
    )
    agent = EgoMem(config, parts)
    server.script = [
        Scripted(content="Hi Emily, good to see you!"),
        Scripted(content="<retr>:\ncolleague\nsport, play<answer>"),
        Scripted(content="Yes, your colleague John loves tennis."),
    ]
    for _ in range(3):  # identity debounce: Emily is confirmed after a couple of polls
        retrieval.observe(Identification(IdentityStatus.KNOWN, user_id=emily.id))
    assert retrieval.current_user() == emily.id
    agent.dialog.user_turn(1.0, 2.0, None)  # the scripted ASR ignores the audio

    greet, first, second = server.requests
    assert "Current user: Emily" in _system(greet) and "has just appeared" in _system(greet)
    assert first["stop"] == ["<answer>"] and "John loves tennis" not in _system(first)
    assert "John loves tennis" in _system(second)  # the agent's real Level-2 retrieval, before the answer
    assert [ev.fields["relations"] for ev in agent.timeline.of_type("retrieval")] == ["colleague"]
    said = [ev.fields["text"] for ev in agent.timeline.of_type("assistant")]
    assert said == ["Hi Emily, good to see you!", "Yes, your colleague John loves tennis."]
