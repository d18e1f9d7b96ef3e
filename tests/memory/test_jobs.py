"""The durable memory-writing queue (memory/jobs.py): a session is stored before extraction,
run once, retried with backoff when the model fails, answered by the rules (recorded) after
the last attempt, and never half-written."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest
from pydantic import BaseModel

from egomem.errors import StoreError
from egomem.identity.types import Identification, IdentityStatus
from egomem.llm.base import ChatProvider, ChatReply, LLMError, LLMProvider, T
from egomem.memory.config import MemoryConfig
from egomem.memory.items import SessionText, Turn
from egomem.memory.job_worker import JobWorker, PerceptionLag
from egomem.memory.jobs import HOST, JobResult, MemoryJobs, RetryPolicy, decode, encode
from egomem.memory.manager import MemoryManager
from egomem.memory.rules_provider import RulesProvider
from egomem.perception.types import FaceObservation, VoiceObservation
from egomem.store.sqlite import SQLiteStore

T0 = 1_700_000_000.0


def _session(ep: str, *user: str, at: float = T0) -> SessionText:
    turns = [Turn(speaker="user", text=u, start=1.0, end=2.0) for u in user]
    turns.append(Turn(speaker="assistant", text="Nice to meet you.", start=3.0, end=3.0))
    return SessionText(episode_id=ep, start=at, end=at + 60, date="14 November 2023", turns=turns)


class Clock:
    """Plumbing: a settable wall clock, so backoffs pass without sleeping."""

    def __init__(self) -> None:
        self.t = T0 + 100

    def __call__(self) -> float:
        return self.t


class FailingLLMMock(LLMProvider):
    """Plumbing mock of a model server: raises `error` for the first `failures` calls, then answers
    with the rules (so a later attempt can succeed)."""

    name = "failing-mock"

    def __init__(self, error: LLMError, failures: int) -> None:
        super().__init__()
        self.error, self.failures, self.calls = error, failures, 0
        self.rules = RulesProvider()

    def run(self, task: str, payload: BaseModel, schema: type[T]) -> T:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error
        return self.rules.run(task, payload, schema)


class GarbageChatMock(ChatProvider):
    """Plumbing mock of a chat server that answers with a false fact cut off mid-JSON (garbage)."""

    name = "garbage-mock"

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def chat(self, messages: list[dict[str, str]], json_schema: dict[str, Any], schema_name: str) -> ChatReply:
        self.calls += 1
        return ChatReply('{"items": [{"kind": "fact", "text": "owns a yacht", "source_text": "I')


def _jobs(store: SQLiteStore, encoder: Any, llm: LLMProvider, clock: Clock, **policy: Any) -> MemoryJobs:
    """One job per session: the model extracts before the one write (memory.model_pass = "inline"); the
    model's pass after the rules' write is tested in test_model_pass.py."""
    manager = MemoryManager(store, llm, encoder, MemoryConfig(model_pass="inline"), fallback=RulesProvider())
    return MemoryJobs(store, manager, RetryPolicy(**policy), clock=clock)


def _facts(store: SQLiteStore) -> list[str]:
    return sorted(f.text for u in store.list_users() for f in store.list_facts(u.id) if f.kind.value != "summary")


def test_payload_round_trip_keeps_turns_and_identity_evidence() -> None:
    face = FaceObservation(np.arange(128, dtype=np.float32) / 128, (1, 2, 3, 4), 7)
    voice = VoiceObservation(np.ones(256, np.float32) / 16, 2.5)
    ident = Identification(IdentityStatus.NEW, face=face, voice=voice)
    session, back = decode(encode(_session("e1", "I'm Nora."), ident))
    assert session == _session("e1", "I'm Nora.")
    assert back is not None and back.status == IdentityStatus.NEW
    assert back.face is not None and back.voice is not None
    np.testing.assert_array_equal(back.face.vector, face.vector)
    assert (back.face.box, back.face.frame_index, back.voice.speech_s) == ((1, 2, 3, 4), 7, 2.5)
    np.testing.assert_array_equal(back.voice.vector, voice.vector)
    with pytest.raises(ValueError, match="unreadable job payload"):
        decode('{"format": "egomem.memory_job/1"}')


def test_a_session_is_stored_before_extraction_and_written_once(store: SQLiteStore, encoder: Any) -> None:
    jobs = _jobs(store, encoder, RulesProvider(), Clock())
    key = jobs.submit(_session("e1", "Hi, I'm Nora.", "I work at Acme as an engineer."))
    assert key == "local:e1" and store.job(key).status == "pending"
    assert store.list_episodes() == []  # nothing extracted yet: the session waits in the store
    assert jobs.submit(_session("e1", "Hi, I'm Nora.", "I work at Acme as an engineer.")) == key  # idempotent
    assert len(store.list_jobs()) == 1
    result = jobs.run_next()
    assert result is not None and result.status == "done" and result.outcome is not None
    job = store.job(key)
    assert (job.status, job.attempts, job.outcome, job.fallback) == ("done", 1, "done", "")
    assert _facts(store) == ["works as an engineer", "works at Acme"]
    assert jobs.run_next() is None
    jobs.submit(_session("e1", "Hi, I'm Nora.", "I work at Acme as an engineer."))  # a resubmit after done
    assert jobs.run_next() is None and len(store.list_episodes()) == 1
    stats = jobs.stats()
    assert (stats.backlog, stats.done, stats.failed, stats.lag_window) == (0, 1, 0, 1)
    assert stats.lag_p50_s == pytest.approx(40.0)  # done at T0+100, the session ended at T0+60


def test_memory_and_job_completion_commit_together(store: SQLiteStore, encoder: Any) -> None:
    """A failure after the memory is written but before the job is marked done leaves neither."""
    jobs = _jobs(store, encoder, RulesProvider(), Clock())
    key = jobs.submit(_session("e1", "Hi, I'm Nora.", "I work at Acme as an engineer."))
    real_finish = store.jobs.finish

    def crash(*a: Any, **kw: Any) -> None:
        raise StoreError("plumbing: the process dies here")

    store.jobs.finish = crash  # type: ignore[method-assign]
    assert jobs.run_next() is not None
    assert store.list_episodes() == [] and _facts(store) == []  # rolled back with the job's completion
    job = store.job(key)
    assert job.status == "pending" and job.attempts == 1
    store.jobs.finish = real_finish  # type: ignore[method-assign]
    jobs.clock.t += 3600  # type: ignore[attr-defined]  # past the backoff
    assert jobs.drain() == 1
    assert store.job(key).status == "done" and _facts(store) == ["works as an engineer", "works at Acme"]


def test_a_server_that_is_down_is_retried_with_backoff_then_the_rules_answer(store: SQLiteStore, encoder: Any) -> None:
    clock = Clock()
    llm = FailingLLMMock(LLMError("endpoint unreachable", "connection refused"), failures=99)
    jobs = _jobs(store, encoder, llm, clock, max_attempts=3, backoff_s=10.0)
    key = jobs.submit(_session("e1", "Hi, I'm Nora.", "I work at Acme as an engineer."))
    waits = []
    for _ in range(2):
        result = jobs.run_next()
        assert result is not None and result.status == "retry" and "endpoint unreachable" in result.error
        job = store.job(key)
        assert job.status == "pending" and "endpoint unreachable" in job.last_error
        waits.append(job.not_before - clock.t)
        assert jobs.run_next() is None  # not due during the backoff
        assert store.list_episodes() == [] and _facts(store) == []  # nothing written meanwhile
        clock.t = job.not_before
    assert waits == [10.0, 20.0]  # exponential
    assert jobs.stats().retrying == 1
    result = jobs.run_next()  # the last attempt: the rules answer, and the job says so
    assert result is not None and result.status == "done"
    job = store.job(key)
    assert (job.status, job.attempts, job.fallback) == ("done", 3, "endpoint unreachable")
    assert job.outcome == "done:fallback(endpoint unreachable)"
    assert store.get_episode("e1").status == "done:fallback(endpoint unreachable)"
    assert _facts(store) == ["works as an engineer", "works at Acme"]
    assert jobs.stats().fallbacks == 1


def test_a_server_back_up_within_the_attempts_answers_itself(store: SQLiteStore, encoder: Any) -> None:
    clock = Clock()
    llm = FailingLLMMock(LLMError("endpoint timeout", "ReadTimeout"), failures=1)
    jobs = _jobs(store, encoder, llm, clock, max_attempts=3, backoff_s=1.0)
    key = jobs.submit(_session("e1", "Hi, I'm Nora.", "I work at Acme as an engineer."))
    assert jobs.run_next() is not None
    clock.t += 1.0
    assert jobs.run_next() is not None
    job = store.job(key)
    assert (job.status, job.attempts, job.fallback, job.outcome) == ("done", 2, "", "done")


def test_garbage_is_never_written_and_the_fallback_is_recorded(store: SQLiteStore, encoder: Any) -> None:
    clock = Clock()
    llm = GarbageChatMock()
    jobs = _jobs(store, encoder, llm, clock, garbage_attempts=2, backoff_s=1.0)
    key = jobs.submit(_session("e1", "Hi, I'm Nora.", "I work at Acme as an engineer."))
    first = jobs.run_next()
    assert first is not None and first.status == "retry" and "malformed JSON" in first.error
    clock.t += 1.0
    assert jobs.run_next() is not None
    job = store.job(key)
    assert (job.status, job.fallback) == ("done", "malformed JSON")
    assert llm.calls == 2
    assert "owns a yacht" not in _facts(store) and _facts(store) == ["works as an engineer", "works at Acme"]


def test_an_unreadable_job_fails_visibly_and_is_not_retried(store: SQLiteStore, encoder: Any) -> None:
    jobs = _jobs(store, encoder, RulesProvider(), Clock())
    store.submit_job("local:bad", "bad", "{not json", session_end=T0, now=T0)
    result = jobs.run_next()
    assert result is not None and result.status == "failed"
    assert store.job("local:bad").status == "failed" and jobs.run_next() is None
    assert jobs.stats().failed == 1 and store.list_episodes() == []


def test_a_claim_of_a_dead_worker_is_taken_back(store: SQLiteStore, encoder: Any) -> None:
    jobs = _jobs(store, encoder, RulesProvider(), Clock())
    key = jobs.submit(_session("e1", "Hi, I'm Nora."))
    # Plumbing: a claim recorded by a process of this host that does not exist (2**22 + 1 is above
    # Linux's largest pid_max, so no process has it); its lease has not ended.
    held = store.claim_job(f"{HOST}:{2**22 + 1}:1", jobs.clock(), lease_s=900.0)
    assert held is not None and held.key == key
    result = jobs.run_next()
    assert result is not None and result.status == "done" and store.job(key).attempts == 2


def test_the_worker_thread_runs_jobs_and_yields_while_perception_is_behind(store: SQLiteStore, encoder: Any) -> None:
    jobs = _jobs(store, encoder, RulesProvider(), Clock())
    behind = [True]
    worker = JobWorker(jobs, behind=lambda: behind[0]).start()
    try:
        key = jobs.submit(_session("e1", "Hi, I'm Nora.", "I work at Acme as an engineer."))
        time.sleep(0.6)
        assert store.job(key).status == "pending" and worker.yielded_s > 0  # perception first
        behind[0] = False
        outcome = jobs.wait(key, timeout_s=60)
        assert store.job(key).status == "done" and outcome is None  # nobody asked for its outcome
        out = jobs.run(_session("e2", "I live in Lyon."), Identification(IdentityStatus.NEW))
        assert out is not None and out.ok and store.job("local:e2").status == "done"
        again = jobs.process(_session("e2", "I live in Lyon."), Identification(IdentityStatus.NEW))
        assert again.ok and again.notes == ["written earlier"] and len(store.list_episodes()) == 2
    finally:
        worker.stop()
    assert not worker.alive and jobs.worker is None


def test_perception_lag_is_wall_time_past_the_stream_clock() -> None:
    now = [100.0]
    lag = PerceptionLag(clock=lambda: now[0])
    assert lag.behind_s() == 0.0
    lag.mark(0.0)
    now[0] += 2.0
    lag.mark(0.5)  # the loop reached stream second 0.5 two seconds in: 1.5 s behind
    assert lag.behind_s() == pytest.approx(1.5)
    lag.mark(5.0)  # a replay as fast as possible is ahead, never behind
    assert lag.behind_s() == 0.0


def test_deleting_a_person_deletes_their_waiting_sessions_and_done_jobs_keep_no_transcript(
    store: SQLiteStore, encoder: Any
) -> None:
    jobs = _jobs(store, encoder, RulesProvider(), Clock())
    nora = store.create_user("Nora")
    known = Identification(IdentityStatus.KNOWN, user_id=nora.id)
    jobs.submit(_session("e1", "I work at Acme as an engineer."), known)
    assert jobs.run_next() is not None
    assert store.job("local:e1").payload == ""  # the episode keeps the transcript, the job does not
    jobs.submit(_session("e2", "I live in Lyon."), known)
    report = store.delete_user(nora.id)
    assert report.removed["memory_jobs"] == 2
    assert store.list_jobs() == [] and jobs.run_next() is None  # nothing left to write her back


def test_with_a_dispatch_the_session_is_stored_and_handed_to_the_fleet(store: SQLiteStore, encoder: Any) -> None:
    handed: list[str] = []  # plumbing: stands for FleetQueue.defer
    jobs = _jobs(store, encoder, RulesProvider(), Clock())
    jobs.dispatch = handed.append
    out = jobs.process(_session("e1", "I live in Lyon."))
    assert out.ok and out.notes == ["queued for a fleet worker"] and handed == ["local:e1"]
    assert store.job("local:e1").status == "pending" and store.list_episodes() == []


def test_a_worker_yields_for_at_most_max_yield_s_at_a_stretch(store: SQLiteStore, encoder: Any) -> None:
    jobs = _jobs(store, encoder, RulesProvider(), Clock())
    results: list[JobResult] = []
    worker = JobWorker(jobs, behind=lambda: True, max_yield_s=0.5, on_result=results.append)  # never catches up
    worker.start()
    try:
        key = jobs.submit(_session("e1", "I live in Lyon."))
        jobs.wait(key, timeout_s=60)
        assert store.job(key).status == "done" and worker.yielded_s >= 0.5
        # The job reports the stretch its worker stepped aside just before claiming it: one stretch, capped.
        (done,) = [r for r in results if r.job.key == key]
        assert 0.5 <= done.yielded_s < 0.5 + 0.5
    finally:
        worker.stop()
