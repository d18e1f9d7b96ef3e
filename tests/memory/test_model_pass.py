"""memory.model_pass = "after": the rules write each session at once and the model's pass over the
same session follows as a job of its own ("refine"), committed with the first write, run after every
waiting first write, adding only what memory does not hold yet, and never undoing a "forget me"."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from egomem.errors import StoreError
from egomem.identity.types import Identification, IdentityStatus
from egomem.llm.base import LLMError, LLMProvider, T
from egomem.memory.items import SessionText, Turn
from egomem.memory.jobs import MemoryJobs, RetryPolicy
from egomem.memory.manager import MemoryManager
from egomem.memory.rules_provider import RulesProvider
from egomem.store.base import REFINE_SUFFIX
from egomem.store.sqlite import SQLiteStore

T0 = 1_700_000_000.0
SAID = ("Hi, I'm Nora.", "I work at Acme as an engineer.", "Honestly the only thing that calms me down is knitting.")


def _session(ep: str, *user: str) -> SessionText:
    turns = [Turn(speaker="user", text=u, start=1.0 + i, end=2.0 + i) for i, u in enumerate(user)]
    turns.append(Turn(speaker="assistant", text="That sounds lovely.", start=9.0, end=9.0))
    return SessionText(episode_id=ep, start=T0, end=T0 + 60, date="14 November 2023", turns=turns)


class ModelMock(LLMProvider):
    """Plumbing mock of a language model: for "extract" it answers what a good model would for SAID
    (what the rules find, a hobby they miss, a summary and a misheard name), or raises `error` while
    `failures` last. Any other task goes to the rules."""

    name = "model-mock"

    def __init__(self, error: LLMError | None = None, failures: int = 0) -> None:
        super().__init__()
        self.error, self.failures, self.calls = error, failures, 0
        self.rules = RulesProvider()

    def run(self, task: str, payload: BaseModel, schema: type[T]) -> T:
        if task != "extract":
            return self.rules.run(task, payload, schema)
        self.calls += 1
        if self.error is not None and self.calls <= self.failures:
            raise self.error
        items = [
            {"kind": "name", "text": "Norah", "source_text": SAID[0]},
            {"kind": "fact", "text": "works at Acme", "source_text": SAID[1]},
            {"kind": "preference", "text": "finds knitting calming", "source_text": SAID[2]},
            {"kind": "summary", "text": "Nora talked about her work and knitting.", "source_text": SAID[2]},
        ]
        return schema.model_validate({"items": items})


class Clock:
    """Plumbing: a settable wall clock, so backoffs pass without sleeping."""

    def __init__(self) -> None:
        self.t = T0 + 100

    def __call__(self) -> float:
        return self.t


def _jobs(store: SQLiteStore, encoder: Any, llm: LLMProvider, **policy: Any) -> MemoryJobs:
    manager = MemoryManager(store, llm, encoder, fallback=RulesProvider())  # the default: model_pass = "after"
    return MemoryJobs(store, manager, RetryPolicy(**policy), clock=Clock())


def _texts(store: SQLiteStore, kind: str | None = None) -> list[str]:
    facts = [f for u in store.list_users() for f in store.list_facts(u.id)]
    return sorted(f.text for f in facts if (f.kind.value == kind if kind else f.kind.value != "summary"))


def test_the_rules_write_at_once_and_the_models_pass_follows_as_its_own_job(store: SQLiteStore, encoder: Any) -> None:
    llm = ModelMock()
    jobs = _jobs(store, encoder, llm)
    key = jobs.submit(_session("e1", *SAID))
    first = jobs.run_next()
    assert first is not None and first.status == "done" and first.follow_up == key + REFINE_SUFFIX
    assert llm.calls == 0  # the first write asked no model
    assert _texts(store) == ["works as an engineer", "works at Acme"]
    assert store.job(key + REFINE_SUFFIX).status == "pending"
    assert jobs.stats().refine_backlog == 1
    second = jobs.run_next()
    assert second is not None and second.job.key == key + REFINE_SUFFIX and second.status == "done"
    assert second.follow_up is None and llm.calls == 1
    # The model adds the hobby; "works at Acme" again is a NOOP; the rules' summary and name stand.
    assert _texts(store) == ["finds knitting calming", "works as an engineer", "works at Acme"]
    assert len(_texts(store, "summary")) == 1
    assert [u.name for u in store.list_users()] == ["Nora"]
    stats = jobs.stats()
    assert (stats.backlog, stats.refine_backlog, stats.done, stats.lag_window) == (0, 0, 2, 1)
    assert stats.refine_lag_p50_s == pytest.approx(40.0)


def test_first_writes_are_claimed_before_any_models_pass(store: SQLiteStore, encoder: Any) -> None:
    jobs = _jobs(store, encoder, ModelMock())
    jobs.submit(_session("e1", *SAID))
    assert jobs.run_next() is not None  # e1 written; its model pass waits
    jobs.submit(_session("e2", "I live in Lyon."))
    nxt = jobs.run_next()
    assert nxt is not None and nxt.job.key == "local:e2"  # submitted later, claimed first
    assert store.claim_job("w", jobs.clock(), lease_s=60.0, kind="write") is None  # no first write left


def test_a_model_that_keeps_failing_leaves_the_rules_memory_and_says_so(store: SQLiteStore, encoder: Any) -> None:
    llm = ModelMock(LLMError("endpoint unreachable", "connection refused"), failures=99)
    jobs = _jobs(store, encoder, llm, max_attempts=2, backoff_s=10.0)
    key = jobs.submit(_session("e1", *SAID)) + REFINE_SUFFIX
    assert jobs.run_next() is not None
    retry = jobs.run_next()
    assert retry is not None and retry.status == "retry" and store.job(key).status == "pending"
    jobs.clock.t += 10.0  # type: ignore[attr-defined]
    last = jobs.run_next()
    assert last is not None and last.status == "done"
    job = store.job(key)
    assert (job.status, job.fallback) == ("done", "endpoint unreachable")
    assert job.outcome == "done:fallback(endpoint unreachable)"
    assert _texts(store) == ["works as an engineer", "works at Acme"]  # the rules' memory, nothing else
    assert store.get_episode("e1").status == "done:fallback(endpoint unreachable)"  # the episode says so too


def test_forget_me_between_the_passes_leaves_nothing_for_the_model(store: SQLiteStore, encoder: Any) -> None:
    llm = ModelMock()
    jobs = _jobs(store, encoder, llm)
    nora = store.create_user("Nora")
    key = jobs.submit(_session("e1", *SAID), Identification(IdentityStatus.KNOWN, user_id=nora.id))
    assert jobs.run_next() is not None and store.job(key + REFINE_SUFFIX).user_id == nora.id
    store.delete_user(nora.id)
    assert jobs.run_next() is None and llm.calls == 0  # her waiting model pass went with her
    assert store.list_users() == []


def test_a_model_pass_whose_episode_is_no_longer_the_users_writes_nothing(store: SQLiteStore, encoder: Any) -> None:
    llm = ModelMock()
    jobs = _jobs(store, encoder, llm)
    jobs.submit(_session("e1", *SAID))
    assert jobs.run_next() is not None
    ep = store.get_episode("e1")
    store.update_episode(ep.model_copy(update={"participants": []}), cause="plumbing: moved to someone else")
    second = jobs.run_next()
    assert second is not None and second.outcome is not None and second.outcome.user_id is None
    assert "model pass skipped" in second.outcome.notes[0] and llm.calls == 0
    assert "finds knitting calming" not in _texts(store)


def test_the_first_write_and_its_model_pass_commit_together(store: SQLiteStore, encoder: Any) -> None:
    """A crash before the first write's commit leaves neither the memory nor the model's job."""
    jobs = _jobs(store, encoder, ModelMock())
    key = jobs.submit(_session("e1", *SAID))
    real_submit = store.jobs.submit

    def crash(k: str, *a: Any, **kw: Any) -> bool:
        if k.endswith(REFINE_SUFFIX):
            raise StoreError("plumbing: the process dies here")
        return real_submit(k, *a, **kw)

    store.jobs.submit = crash  # type: ignore[method-assign]
    assert jobs.run_next() is not None
    assert store.list_episodes() == [] and _texts(store) == [] and store.job(key).status == "pending"
    assert [j.key for j in store.list_jobs()] == [key]


def test_a_caller_that_waits_gets_both_passes_and_an_unsure_session_none(store: SQLiteStore, encoder: Any) -> None:
    llm = ModelMock()
    jobs = _jobs(store, encoder, llm)
    out = jobs.process(_session("e1", *SAID), Identification(IdentityStatus.NEW))
    assert out.ok and llm.calls == 1
    added = [text for op, _, text in out.applied.ops if op == "ADD"]
    assert "works at Acme" in added and "finds knitting calming" in added  # the rules' write, then the model's
    assert added.index("finds knitting calming") > added.index("works at Acme")
    assert "finds knitting calming" in _texts(store)
    nora = store.list_users()[0]
    unsure = Identification(IdentityStatus.UNSURE, user_id=nora.id)
    held = jobs.process(_session("e2", "I live in Lyon."), unsure)
    assert held.held and llm.calls == 1  # held: no model pass for anyone
    assert [j.key for j in store.list_jobs() if j.key.endswith(REFINE_SUFFIX)] == ["local:e1" + REFINE_SUFFIX]


def test_without_the_queue_the_manager_runs_both_passes(store: SQLiteStore, encoder: Any) -> None:
    llm = ModelMock()
    manager = MemoryManager(store, llm, encoder, fallback=RulesProvider())
    out = manager.process(_session("e1", *SAID))
    assert out.ok and llm.calls == 1
    assert _texts(store) == ["finds knitting calming", "works as an engineer", "works at Acme"]
    assert len(_texts(store, "summary")) == 1


def test_a_drain_leaves_the_models_pass_to_the_worker_that_outlives_the_agent(store: SQLiteStore, encoder: Any) -> None:
    # The server's devices: an agent writes first writes only (refine_elsewhere) and its end-of-stream
    # drain returns once they are in; the tenant's worker (another MemoryJobs on the same store) runs
    # the model's pass afterwards.
    from egomem.memory.job_worker import JobWorker

    llm = ModelMock()
    agent_jobs = _jobs(store, encoder, llm)
    agent_jobs.refine_elsewhere = True
    key = agent_jobs.submit(_session("e1", *SAID))
    assert agent_jobs.drain(timeout_s=30) == 1  # the first write only
    assert store.job(key).status == "done" and store.job(key + REFINE_SUFFIX).status == "pending"
    assert llm.calls == 0 and _texts(store) == ["works as an engineer", "works at Acme"]
    tenant = JobWorker(_jobs(store, encoder, llm), kind="refine").start()
    try:
        tenant.jobs.drain(timeout_s=30)  # waits for the tenant's worker thread to run the pass
    finally:
        tenant.stop(drain=False)
    assert store.job(key + REFINE_SUFFIX).status == "done" and llm.calls == 1
    assert _texts(store) == ["finds knitting calming", "works as an engineer", "works at Acme"]
