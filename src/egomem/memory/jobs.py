"""The durable memory-writing queue: a finished session is committed before extraction.

`MemoryJobs.submit` stores the session (its turns, speakers and identity evidence, as
JSON) in the store's table memory_jobs under an idempotent key (`<source>:<episode id>`;
submitting it again changes nothing). `run_next` claims a due job, runs it through
`MemoryManager.process`, and marks it done *inside the transaction that writes its
memory*: a crash or `kill -9` before that commit leaves no memory and a job that is due
again (its worker's lease ends, or at once when the worker is known dead), a crash after
it leaves the job done, so every session is written exactly once.

A model that fails (server down or slow, an answer that is not the JSON asked for) is not
written: the job goes back with an exponential backoff, and after its last attempt the
rules answer instead; the job and the episode record that (`fallback`,
`done:fallback(<reason>)`). Transient failures (an endpoint that does not answer, a local
model that crashed) get `max_attempts`; an answer that is garbage gets
`garbage_attempts`, 1 by default, as a model decoding greedily gives the same answer
again (a remote one sampling may not: raise it there).

A store that stops answering (a database restart or crash: StoreUnreachable) fails no session:
`process` waits it out for up to `store_wait_s` (submitting again under the same key, which is
idempotent, and reading the job's status again), and an attempt whose write died with the
connection is given back with the backoff, or, when giving it back fails too, stays claimed by this
process with no thread running it: an orphan, which the process's next claim takes back at once
once the database answers (no lease to wait out). `counts` says how often each happened, and
`hit` / `retried` which jobs (keys) the store's failures hit and which of those were tried again
(a wait that ended with the store answering, or a new attempt).

Workers: `memory/job_worker.py` (a low-priority thread, embedded) and the PostgreSQL
queue of `runtime/fleet_queue.py` (any number of `egomem worker` processes); both run
jobs through `run_next`, so the exactly-once rule above holds for each.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np
from pydantic import ValidationError

from egomem.errors import EgomemError, StoreUnreachable
from egomem.identity.types import Identification, IdentityStatus
from egomem.llm.base import LLMError, transient
from egomem.memory.config import MemoryConfig
from egomem.memory.items import SessionText
from egomem.memory.manager import MemoryManager, SessionOutcome, merged
from egomem.perception.types import FaceObservation, VoiceObservation
from egomem.store.base import REFINE_SUFFIX, JobKind, MemoryJob, MemoryStore, QueueStats

log = logging.getLogger(__name__)

PAYLOAD_FORMAT = "egomem.memory_job/1"
HOST = socket.gethostname()


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 3  # transient model failures: attempts before the rules answer
    garbage_attempts: int = 1  # answers that are not the JSON asked for
    backoff_s: float = 5.0  # the first retry's wait; doubled per attempt
    backoff_max_s: float = 300.0
    lease_s: float = 900.0  # a claim older than this is taken back (longer than any extraction)
    store_wait_s: float = 300.0  # how long a caller waits out a database that does not answer

    @classmethod
    def from_config(cls, cfg: MemoryConfig) -> RetryPolicy:
        return cls(
            max_attempts=cfg.queue_max_attempts,
            garbage_attempts=cfg.queue_garbage_attempts,
            backoff_s=cfg.queue_backoff_s,
            lease_s=cfg.queue_lease_s,
        )

    def attempts_for(self, exc: LLMError) -> int:
        return self.max_attempts if transient(exc) else self.garbage_attempts

    def backoff(self, attempts: int) -> float:
        return min(self.backoff_max_s, self.backoff_s * 2 ** max(0, attempts - 1))


@dataclass(frozen=True)
class JobResult:
    job: MemoryJob  # as claimed
    status: str  # what became of it: done, retry, failed
    outcome: SessionOutcome | None = None
    error: str = ""
    wall_s: float = 0.0  # seconds this attempt took (extract, update agent, write)
    cpu_s: float = 0.0  # process CPU seconds meanwhile (other threads' work included)
    follow_up: str | None = None  # the model's refining job this write committed (memory.model_pass = "after")
    yielded_s: float = 0.0  # seconds its worker stepped aside for perception just before claiming it


# -- payload -------------------------------------------------------------------------------
def encode(session: SessionText, identification: Identification | None) -> str:
    ident: dict[str, Any] | None = None
    if identification is not None:
        ident = {"status": identification.status.value, "user_id": identification.user_id}
        if identification.face is not None:
            f = identification.face
            ident["face"] = {
                "vector": _floats(f.vector),
                "box": list(f.box),
                "frame_index": f.frame_index,
                "faces_in_view": f.faces_in_view,
            }
        if identification.voice is not None:
            v = identification.voice
            ident["voice"] = {"vector": _floats(v.vector), "speech_s": v.speech_s}
    return json.dumps({"format": PAYLOAD_FORMAT, "session": session.model_dump(mode="json"), "identification": ident})


def _face(raw: dict[str, Any]) -> FaceObservation:
    box = tuple(raw["box"])
    # faces_in_view: payloads written before it was recorded held one face's observation
    return FaceObservation(_vector(raw["vector"]), box, int(raw["frame_index"]), int(raw.get("faces_in_view", 1)))


def decode(payload: str) -> tuple[SessionText, Identification | None]:
    """The session and identification of a job; ValueError for a payload this code cannot read."""
    try:
        data = json.loads(payload)
        if data.get("format") != PAYLOAD_FORMAT:
            raise ValueError(f"unknown job format {data.get('format')!r}")
        session = SessionText.model_validate(data["session"])
        raw = data.get("identification")
        if raw is None:
            return session, None
        face = raw.get("face")
        voice = raw.get("voice")
        ident = Identification(
            status=IdentityStatus(raw["status"]),
            user_id=raw.get("user_id"),
            face=None if face is None else _face(face),
            voice=None if voice is None else VoiceObservation(_vector(voice["vector"]), float(voice["speech_s"])),
        )
        return session, ident
    except (KeyError, TypeError, AttributeError, ValidationError, json.JSONDecodeError) as exc:
        raise ValueError(f"unreadable job payload: {type(exc).__name__}: {str(exc)[:200]}") from exc


def _floats(v: np.ndarray) -> list[float]:
    return [float(x) for x in np.asarray(v, np.float32)]


def _vector(v: list[float]) -> np.ndarray:
    return np.asarray(v, np.float32)


# -- workers -------------------------------------------------------------------------------
# The worker ids of this process's threads that are claiming or running a job now. A claim by this
# process that none of them holds is an orphan: its attempt died with the store's connection and
# giving it back failed too, or the claim's COMMIT reached the server but its answer did not.
_RUNNING: set[str] = set()
_RUNNING_LOCK = threading.Lock()


def orphaned_here(claimed_by: str, claimer: str) -> bool:
    """A claim by this process that no thread of it is running (the claiming thread runs nothing else)."""
    host, _, rest = claimed_by.partition(":")
    if host != HOST or rest.partition(":")[0] != str(os.getpid()):
        return False
    if claimed_by == claimer:
        return True
    with _RUNNING_LOCK:
        return claimed_by not in _RUNNING


def worker_id() -> str:
    """host:pid:thread of the calling thread (what a claim records)."""
    return f"{HOST}:{os.getpid()}:{threading.get_native_id()}"


def dead_local_worker(claimed_by: str) -> bool:
    """A claim by a process of this host that no longer runs (killed, crashed): no need to wait out its lease."""
    host, _, rest = claimed_by.partition(":")
    pid = rest.partition(":")[0]
    if host != HOST or not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return False


class MemoryJobs:
    """Submit finished sessions and run them, exactly once each, through one store and manager."""

    def __init__(
        self,
        store: MemoryStore,
        manager: MemoryManager,
        policy: RetryPolicy | None = None,
        *,
        source: str = "local",
        clock: Callable[[], float] = time.time,
        dispatch: Callable[[str], None] | None = None,
    ) -> None:
        """`dispatch(key)`: hand each submitted job to other workers (the fleet's procrastinate,
        runtime/fleet_queue.py) instead of running it in this process."""
        self.store = store
        self.manager = manager
        self.policy = policy or RetryPolicy()
        self.source = source
        self.clock = clock
        self.dispatch = dispatch
        self._settled = threading.Condition()
        self._outcomes: dict[str, SessionOutcome] = {}
        self._wanted: set[str] = set()  # keys whose outcome a caller of `run` waits for
        self.worker: Any = None  # a running JobWorker (memory/job_worker.py) runs what `run` submits
        self.refine_worker: Any = None  # one for the model's refining jobs (memory.model_pass = "after")
        # The model's passes are run by a longer-lived worker elsewhere (the server's per-tenant one,
        # server/refiners.py): a drain here leaves them in the store and waits for first writes only.
        self.refine_elsewhere = False
        self.submitted = threading.Event()  # set on every submit: wakes an idle worker
        # Told every job this process settles (done or failed for good, not a retry), in the thread
        # that ran it: how a caller that did not wait learns its outcome (runtime/memory_queue.py).
        self.on_settled: list[Callable[[JobResult], None]] = []
        # What the store's failures cost this process: attempts that died with the store's connection,
        # attempts the store refused otherwise (a conflicting concurrent write), callers that
        # waited a database out, claims taken back from a dead worker or an orphan, jobs run again after
        # a failed attempt and how many of those were written.
        self.counts = {"store_failures": 0, "store_refusals": 0, "store_waits": 0, "orphans_taken": 0}
        self.counts.update(retries_run=0, retries_done=0)
        self.hit: set[str] = set()
        self.retried: set[str] = set()
        self._counts_lock = threading.Lock()

    def _count(self, name: str, *, hit: str | None = None, retried: str | None = None) -> None:
        with self._counts_lock:
            if name:
                self.counts[name] += 1
            if hit is not None:
                self.hit.add(hit)
            if retried is not None:
                self.retried.add(retried)

    def key(self, episode_id: str) -> str:
        return f"{self.source}:{episode_id}"

    def submit(self, session: SessionText, identification: Identification | None = None) -> str:
        """Commit the session as a job (before any extraction); its key. Submitting it again is a no-op."""
        key = self.key(session.episode_id)
        payload = encode(session, identification)
        user = identification.user_id if identification is not None else None
        end, now = session.end, self.clock()
        self.store.submit_job(key, session.episode_id, payload, session_end=end, now=now, user_id=user)
        self.submitted.set()
        return key

    def run_next(
        self, *, key: str | None = None, kind: JobKind | None = None, yielded_s: float = 0.0
    ) -> JobResult | None:
        """Claim one due job (or job `key`; of `kind` only) and run it; None when nothing is due.
        `yielded_s`: how long the calling worker stepped aside for perception before this claim
        (reported with the result, so a job's wait can be told apart from its queue's)."""
        worker = worker_id()
        taken: list[str] = []  # the claim a dead worker or an orphan held, when the job claimed is theirs

        def stale(held_by: str) -> bool:
            if dead_local_worker(held_by) or orphaned_here(held_by, worker):
                taken.append(held_by)
                return True
            return False

        with _RUNNING_LOCK:  # before the claim: no other thread may take what this one claims for an orphan
            _RUNNING.add(worker)
        try:
            job = self.store.claim_job(
                worker, self.clock(), lease_s=self.policy.lease_s, key=key, stale=stale, kind=kind
            )
            if job is None:
                return None
            if taken:  # its last attempt died with its worker or with the store's connection
                self._count("orphans_taken", hit=job.key)
            t0, c0 = time.perf_counter(), time.process_time()
            result = self._run(job, worker)
            result = replace(
                result, wall_s=time.perf_counter() - t0, cpu_s=time.process_time() - c0, yielded_s=yielded_s
            )
        finally:
            with _RUNNING_LOCK:
                _RUNNING.discard(worker)
        if job.attempts > 1:
            self._count("retries_run", retried=job.key)
            if result.status == "done":
                self._count("retries_done")
        with self._settled:
            if result.outcome is not None and job.key in self._wanted:
                self._outcomes[job.key] = result.outcome
            self._settled.notify_all()
        if result.status != "retry":
            for callback in self.on_settled:
                try:
                    callback(result)
                except Exception:  # a listener's bug must not stop the worker (the job is written)
                    log.exception("memory job %s: a completion listener failed", job.key)
        return result

    def _run(self, job: MemoryJob, worker: str) -> JobResult:
        try:
            session, ident = decode(job.payload)
        except ValueError as exc:
            log.error("memory job %s: %s", job.key, exc)
            self.store.fail_job(job.key, worker, error=str(exc), now=self.clock())
            return JobResult(job, "failed", error=str(exc))

        follow_up: list[str] = []

        def finish(outcome: SessionOutcome) -> None:  # inside the memory write's transaction
            status = self._episode_status(outcome)
            fallback = status.removeprefix("done:fallback(").removesuffix(")") if "fallback(" in status else ""
            self.store.finish_job(job.key, worker, outcome=status, fallback=fallback, now=self.clock())
            if refining or self.manager.refiner is None or not outcome.ok or outcome.held or not outcome.user_id:
                return
            # The model's pass over what the rules just wrote, committed with it: a crash loses neither.
            refine = job.key + REFINE_SUFFIX
            known = Identification(status=IdentityStatus.KNOWN, user_id=outcome.user_id)
            end, user = job.session_end, outcome.user_id
            self.store.submit_job(
                refine, job.episode_id, encode(session, known), session_end=end, now=self.clock(), user_id=user
            )
            follow_up.append(refine)

        refining = job.key.endswith(REFINE_SUFFIX)

        def last(exc: LLMError) -> bool:  # this attempt is the last for such a failure
            return job.attempts >= self.policy.attempts_for(exc)

        refine_for = None if ident is None else ident.user_id
        if refining and refine_for is None:
            log.error("memory job %s: a refining job names no user", job.key)
            self.store.fail_job(job.key, worker, error="a refining job names no user", now=self.clock())
            return JobResult(job, "failed", error="a refining job names no user")
        try:
            if refining and refine_for is not None:
                outcome = self.manager.refine(session, refine_for, fall_back=last, commit_with=finish)
            else:
                outcome = self.manager.process(session, ident, fall_back=last, commit_with=finish, then_refine=False)
        except LLMError as exc:  # not the last attempt: nothing written, try again later
            wait = self.policy.backoff(job.attempts)
            log.warning("memory job %s attempt %d: %s; retrying in %.0f s", job.key, job.attempts, exc, wait)
            self.store.retry_job_later(job.key, worker, error=str(exc), not_before=self.clock() + wait)
            return JobResult(job, "retry", error=str(exc))
        except EgomemError as exc:  # the store refused (a lost connection, a lease taken over): due again later
            log.warning("memory job %s attempt %d: %s", job.key, job.attempts, exc)
            if isinstance(exc, StoreUnreachable):
                self._count("store_failures", hit=job.key)
            else:  # e.g. a concurrent write to the same person ("already superseded"): tried again too
                self._count("store_refusals")
            self._give_back(job, worker, str(exc))
            return JobResult(job, "retry", error=str(exc))
        self.submitted.set()  # wakes an idle worker for the follow-up
        return JobResult(job, "done", outcome, follow_up=follow_up[0] if follow_up else None)

    def _give_back(self, job: MemoryJob, worker: str, error: str) -> None:
        try:
            self.store.retry_job_later(
                job.key, worker, error=error, not_before=self.clock() + self.policy.backoff(job.attempts)
            )
        except EgomemError as exc:  # still unreachable: an orphan, this process's next claim takes it back
            log.warning("memory job %s: could not give it back (%s); taken back once the store answers", job.key, exc)

    def _episode_status(self, outcome: SessionOutcome) -> str:
        if not outcome.ok:
            return f"failed:{outcome.reason}"
        return next((n for n in outcome.notes if n.startswith("done:fallback(")), "done")

    def run(self, session: SessionText, identification: Identification | None = None) -> SessionOutcome | None:
        """Submit a session and return its outcome once written: by the running worker thread if there
        is one (low priority, yielding to perception), else here. None when the job failed for good."""
        key = self.key(session.episode_id)
        with self._settled:
            self._wanted.add(key)
        try:
            self.waiting_out(lambda: self.submit(session, identification), key=key)
            return self._until_settled(key)
        finally:
            with self._settled:
                self._wanted.discard(key)
                self._outcomes.pop(key, None)

    def _until_settled(self, key: str) -> SessionOutcome | None:
        """Wait for stored job `key` to be settled: run by this process's worker thread for its kind if
        one runs, else here. Its outcome (None when it failed or another process ran it)."""
        worker = self.refine_worker if key.endswith(REFINE_SUFFIX) else self.worker
        if worker is None or not worker.alive:

            def settled_here() -> bool:
                if self.store.job(key).status in ("done", "failed"):
                    return True
                if self.run_next(key=key) is None:  # in a backoff (or held elsewhere): wait for it
                    time.sleep(min(0.5, self.policy.backoff_s))
                return False

            self.waiting_out(settled_here, until_true=True, key=key)
        return self.wait(key)

    def refined(self, first: SessionOutcome, key: str) -> SessionOutcome:
        """`first` (a session's first write, job `key`) with the model's refining pass, once that is
        settled too, when the write committed one: what a caller that waits for memory waits for."""
        refine = key + REFINE_SUFFIX
        with self._settled:
            self._wanted.add(refine)
        try:
            if not self.waiting_out(lambda: self._stored(refine), key=refine):
                return first
            second = self._until_settled(refine) or self.waiting_out(lambda: self.settled_outcome(refine), key=refine)
        finally:
            with self._settled:
                self._wanted.discard(refine)
                self._outcomes.pop(refine, None)
        return first if second is None else merged(first, second)

    def process(self, session: SessionText, identification: Identification | None = None) -> SessionOutcome:
        """`MemoryManager.process` through the queue (what the agent calls): the session is committed as
        a job first, then written exactly once. A job that another process wrote, or that failed for
        good, is reported from its row. With `dispatch`, the job goes to the fleet and this returns at once."""
        if self.dispatch is not None:
            self.dispatch(self.submit(session, identification))
            return SessionOutcome(session.episode_id, True, notes=["queued for a fleet worker"])
        key = self.key(session.episode_id)
        try:
            outcome = self.run(session, identification)
        except StoreUnreachable as exc:
            if not self._stored(key):  # never committed: the caller keeps the session and hands it over again
                raise
            log.warning("memory job %s is stored; its outcome is not known yet (%s)", key, exc)
            return SessionOutcome(session.episode_id, True, notes=["queued: the store did not answer in time"])
        if outcome is None:
            outcome = self.waiting_out(lambda: self.settled_outcome(key), key=key)
            assert outcome is not None  # `run` returns once the job is settled
        return self.refined(outcome, key) if outcome.ok and self.manager.refiner is not None else outcome

    def settled_outcome(self, key: str) -> SessionOutcome | None:
        """The outcome of job `key` as its row tells it, once settled (done or failed; written by this
        process earlier or by another); None while it waits or runs."""
        job = self.store.job(key)
        if job.status == "failed":
            return SessionOutcome(job.episode_id, False, reason=job.last_error or "memory job failed")
        if job.status != "done":
            return None
        ok = job.outcome.startswith("done")
        return SessionOutcome(job.episode_id, ok, reason="" if ok else job.outcome, notes=["written earlier"])

    def _stored(self, key: str) -> bool:
        try:
            self.store.job(key)
        except EgomemError:
            return False
        return True

    def waiting_out(self, call: Callable[[], Any], *, until_true: bool = False, key: str | None = None) -> Any:
        """`call()` (until it returns True, with `until_true`), waiting out a database that does not
        answer with a backoff (0.2 s doubling to 5 s) for up to `store_wait_s` at a stretch; then the
        StoreUnreachable is raised. Only for calls that are safe to repeat (idempotent)."""
        down_since: float | None = None
        pause = 0.2
        while True:
            try:
                result = call()
            except StoreUnreachable as exc:
                now = time.monotonic()
                if down_since is None:
                    down_since = now
                    self._count("store_waits", hit=key)
                    log.warning(
                        "the memory store does not answer (%s): waiting up to %.0f s", exc, self.policy.store_wait_s
                    )
                elif now - down_since > self.policy.store_wait_s:
                    raise
                time.sleep(pause)
                pause = min(5.0, pause * 2)
                continue
            if down_since is not None:
                self._count("", retried=key)
            down_since, pause = None, 0.2
            if not until_true or result:
                return result

    def drain(self, *, timeout_s: float | None = None) -> int:
        """Until no job is left pending or running: run them here, or, while a worker thread runs, wait
        for it (waiting out backoffs either way); the number run here. TimeoutError when jobs remain
        after `timeout_s`. With `refine_elsewhere`, the model's passes are left to their worker."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        n = 0
        while True:
            # Each kind of job not run by a worker thread of this process is run here, first writes first.
            workers: tuple[tuple[JobKind, Any], ...] = (("write", self.worker), ("refine", self.refine_worker))
            idle = [
                k for k, w in workers if (w is None or not w.alive) and not (k == "refine" and self.refine_elsewhere)
            ]
            if any(self.waiting_out(partial(self.run_next, kind=k)) is not None for k in idle):
                n += 1
                continue
            left = self.owed(self.waiting_out(self.stats))
            if left == 0:
                return n
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"{left} memory job(s) still waiting after {timeout_s} s")
            with self._settled:
                self._settled.wait(min(0.5, self.policy.backoff_s))

    def owed(self, stats: QueueStats) -> int:
        """Jobs waiting or running that a drain here answers for: all of them, or the first writes
        only when the model's passes are `refine_elsewhere`."""
        return stats.backlog - (stats.refine_backlog if self.refine_elsewhere else 0)

    def wait(self, key: str, *, timeout_s: float | None = None) -> SessionOutcome | None:
        """Block until job `key` is settled (done or failed) by any worker of this process; its outcome
        (None when it failed or another process ran it)."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            with self._settled:
                if key in self._outcomes:
                    return self._outcomes.pop(key)
            # Read outside the lock: waiting out a database that does not answer must not hold up the
            # worker that reports an outcome.
            settled = self.waiting_out(lambda: self.store.job(key), key=key).status in ("done", "failed")
            with self._settled:
                if key in self._outcomes or settled:
                    return self._outcomes.pop(key, None)
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise TimeoutError(f"memory job {key} not settled after {timeout_s} s")
                self._settled.wait(0.5 if left is None else min(0.5, left))

    def stats(self) -> QueueStats:
        return self.store.job_stats(self.clock())
