"""Names during the session: a recognised user whose name memory lacks is asked for it
(never told "we haven't met"); when they say it, it is written at once and Level 1
refreshes, inside the real agent loop."""

from __future__ import annotations

from typing import Any

from egomem.dialog.base import UserTurn
from egomem.dialog.template import TemplateResponder
from egomem.schemas import MemChunk


def _chunk(user: str | None, text: str) -> MemChunk:
    return MemChunk(level=1, text=text, user_id=user, at=0.0)


def test_recognised_unnamed_user_is_asked_not_told_we_never_met() -> None:
    m = TemplateResponder()
    m.on_memchunk(_chunk("u1", "Current user: name not known yet\nFacts:\n- works as a nurse"))
    said = "".join(m.proactive(0.0))
    assert "met" not in said and "name" in said and said.startswith("Hello again")
    m.on_memchunk(_chunk("u2", "Current user: name not known yet"))
    said = "".join(m.proactive(0.0))
    assert "met" not in said and "What's your name?" in said


def test_name_learned_mid_session_is_acknowledged_once() -> None:
    m = TemplateResponder()
    m.on_memchunk(_chunk("u1", "Current user: name not known yet"))
    list(m.proactive(0.0))
    m.on_memchunk(_chunk("u1", "Current user: Anna"))  # memory wrote the name, Level 1 refreshed
    assert "".join(m.proactive(1.0)) == "Nice to meet you, Anna."
    assert "".join(m.on_user_turn(UserTurn("i'm anna", 1.0, 2.0))) == ""  # already answered
    assert "".join(m.on_user_turn(UserTurn("i love tennis", 3.0, 4.0))) == "I see. Tell me more."


class _ScriptedASR:
    def __init__(self, text: str) -> None:
        self.text = text

    def transcribe(self, audio: Any) -> str:
        return self.text


def _agent_with_known_user(store: Any, asr: _ScriptedASR, user_id: str) -> tuple[Any, Any]:
    """The real agent (rules memory, no trigger) whose retrieval has settled on `user_id`: three KNOWN
    polls, each logged as IdentityPoller.poll logs it."""
    from egomem.config import Config
    from egomem.identity.types import Identification, IdentityStatus
    from egomem.memory.manager import MemoryManager
    from egomem.memory.rules_provider import RulesProvider
    from egomem.memory.trigger.metrics import sessions
    from egomem.perception.vad import SileroVAD
    from egomem.retrieval.encoder import default_encoder
    from egomem.retrieval.process import RetrievalProcess
    from egomem.runtime.agent import Components, EgoMem
    from egomem.runtime.identity_poller import sighting

    config = Config()
    encoder = default_encoder()
    retrieval = RetrievalProcess(store, encoder=encoder, config=config.retrieval)
    parts = Components(
        store=store,
        retrieval=retrieval,
        model=TemplateResponder(),
        transcriber=asr,
        trigger=None,  # memory management is not run here
        sessions=sessions,
        manager=MemoryManager(store, RulesProvider(), encoder, config.memory),
        vad=SileroVAD(),
    )
    agent = EgoMem(config, parts)
    for t in (0.0, 1.0, 2.0):  # identity debounce; each poll also logged, as IdentityPoller.poll does
        ident = Identification(IdentityStatus.KNOWN, user_id=user_id)
        retrieval.observe(ident)
        agent.log.present(t, retrieval.current_user(), sighting(ident, retrieval.seen_as()))
    return agent, retrieval


def test_agent_writes_a_name_said_during_the_session(store: Any) -> None:
    from egomem.schemas import Fact

    user = store.create_user(None)
    store.add_fact(Fact(user_id=user.id, text="works as a nurse"))
    asr = _ScriptedASR("oh sorry i'm sarah by the way")
    agent, retrieval = _agent_with_known_user(store, asr, user.id)
    agent.dialog.user_turn(1.0, 2.0, None)
    assert store.get_user(user.id).name == "Sarah"
    assert retrieval.level1_chunk().text.startswith("Current user: Sarah")
    said = [ev.fields["text"] for ev in agent.timeline.of_type("assistant")]
    assert said[0].startswith("Hello again!") and said[1:] == ["Nice to meet you, Sarah."]
    asr.text = "i'm tired today"  # no name: nothing written, the name stays
    agent.dialog.user_turn(3.0, 4.0, None)
    assert store.get_user(user.id).name == "Sarah"


def test_a_name_said_just_after_a_change_of_person_waits_for_its_speaker(store: Any) -> None:
    """Level 1 is debounced: just after person B replaces A, it still says A. "John here"
    then must not name A; it names B once B becomes current (the demo's day-1 hand-over)."""
    from egomem.config import Config
    from egomem.identity.types import Identification, IdentityStatus
    from egomem.memory.manager import MemoryManager
    from egomem.memory.rules_provider import RulesProvider
    from egomem.memory.trigger.metrics import sessions
    from egomem.perception.vad import SileroVAD
    from egomem.retrieval.encoder import default_encoder
    from egomem.retrieval.process import RetrievalProcess
    from egomem.runtime.agent import Components, EgoMem
    from egomem.runtime.window import AgentStream

    a, b = store.create_user(None), store.create_user(None)
    config = Config()
    encoder = default_encoder()
    stream = AgentStream(config.runtime.buffer_s)
    retrieval = RetrievalProcess(store, encoder=encoder, config=config.retrieval, clock=stream.clock)
    parts = Components(
        store=store,
        retrieval=retrieval,
        model=TemplateResponder(),
        transcriber=_ScriptedASR("hey john here"),
        trigger=None,  # memory management is not run here
        sessions=sessions,
        manager=MemoryManager(store, RulesProvider(), encoder, config.memory),
        vad=SileroVAD(),
    )
    agent = EgoMem(config, parts, stream=stream)
    for _ in range(3):
        retrieval.observe(Identification(IdentityStatus.KNOWN, user_id=a.id))
    agent.identity.names.settle(0.0, retrieval.current_user())
    assert retrieval.current_user() == a.id
    retrieval.observe(Identification(IdentityStatus.KNOWN, user_id=b.id))  # B seen; Level 1 still A
    assert retrieval.current_user() == a.id
    agent.dialog.user_turn(1.0, 2.0, None)
    assert store.get_user(a.id).name is None  # not the stale current user
    for _ in range(2):
        retrieval.observe(Identification(IdentityStatus.KNOWN, user_id=b.id))
    assert retrieval.current_user() == b.id
    agent.identity.names.settle(3.0, a.id)  # still A: keeps waiting
    assert store.get_user(a.id).name is None
    agent.identity.names.settle(4.0, b.id)
    assert store.get_user(b.id).name == "John" and store.get_user(a.id).name is None


def test_a_turn_giving_two_peoples_own_names_is_kept_out_of_memory(store: Any) -> None:
    """Two callers in one VAD turn that no split told apart ("This is Diane ... And I'm Sheila"): the
    turn is heard (timeline) but written into nobody's memory, and neither name is given to the user."""
    from egomem.runtime.conversation_log import UNKNOWN_VOICE

    user = store.create_user(None)
    asr = _ScriptedASR("Hello? This is Diane, from New Jersey. And I'm Sheila, from Chicago.")
    agent, _ = _agent_with_known_user(store, asr, user.id)
    agent.dialog.user_turn(0.5, 2.0, None)
    assert [h.speaker for h in agent.log.heard_turns()] == [UNKNOWN_VOICE]
    assert store.get_user(user.id).name is None
    heard = agent.timeline.of_type("heard")
    assert heard[-1].fields["user"] is None and heard[-1].fields["names"] == ["Diane", "Sheila"]
    asr.text = "And I'm Sheila."  # one name in a turn: the user's, as before
    agent.dialog.user_turn(1.0, 2.0, None)
    assert store.get_user(user.id).name == "Sheila"
