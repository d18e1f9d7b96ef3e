"""The memory management process, in its own worker thread, a round every `memory_interval_s`.

Each round the episodic trigger tags the stream since the last finished session; spans of the
same person are fused, each grows to cover the heard turns it overlaps, and each finished
session is assembled per speaker from the conversation log and handed to memory. A session is
finished only when every user turn in it has its transcript, so the end of a stream flushes the
open turn and transcribes it before the last round.

Handing over: with the queue (`AgentQueue`) a live round commits each finished session as a job
(its turns, speakers and identity evidence in the store) and goes on; the queue's worker writes
the jobs in order, and what follows a written session (its outcome, the timeline's "memory"
entries, Level 1 refreshed, observers told: `SessionHandled`) happens when its job completes.
A lockstep round waits for each session to be written (`hand_over`), so a replay is repeatable.
The end of the stream drains the queue (`join`).

A session of a person identity is unsure about goes to memory as UNSURE and may be held
(runtime/unsure.py); each round hands held sessions over again once their person is settled, and
drops those never settled (the last round and `join` drop what is left).
"""

from __future__ import annotations

import logging
import math
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from egomem.config import RuntimeConfig
from egomem.errors import EgomemError
from egomem.identity.types import Identification, IdentityStatus
from egomem.memory.items import SessionText, Turn
from egomem.memory.jobs import JobResult
from egomem.memory.manager import MemoryManager, SessionOutcome
from egomem.memory.trigger.features import KnownVAD
from egomem.perception.audio import SAMPLE_RATE
from egomem.retrieval.process import RetrievalProcess
from egomem.runtime.conversation_log import SOMEONE, UNKNOWN_VOICE, UNSURE_SPEAKER, ConversationLog
from egomem.runtime.dialog_loop import ProcessTimes
from egomem.runtime.memory_queue import DRAIN_TIMEOUT_S, AgentQueue, Drained
from egomem.runtime.names import NameLearner
from egomem.runtime.privacy_turns import PrivacyTurns
from egomem.runtime.timeline import Timeline
from egomem.runtime.unsure import UnsureMemory
from egomem.runtime.window import AgentStream
from egomem.stream.clock import STEP_S

logger = logging.getLogger(__name__)
FINAL_ATTEMPTS = 4  # the last round of a stream: tried again after 2, 4, 8 s before its sessions are lost
FINAL_BACKOFF_S = 2.0


class Trigger(Protocol):
    def tag(self, listen16k: np.ndarray, speak16k: np.ndarray, vad: KnownVAD | None = None) -> np.ndarray: ...


@dataclass(frozen=True)
class SessionHandled:
    """What an observer of the memory process is told for each session handed to memory."""

    session: SessionText
    outcome: SessionOutcome
    wall_s: float  # seconds inside `MemoryManager.process` (extract, update agent, write)
    cpu_s: float  # process CPU seconds meanwhile (other threads' work included)
    queued_s: float = 0.0  # seconds from handing it over to written (waiting in the queue included)
    refined: bool = False  # the model's pass over a session the rules wrote first (memory.model_pass = "after")
    yielded_s: float = 0.0  # of queued_s: its worker stepping aside for perception just before taking it
    # Rounds that found it over but left it open for a turn still being heard or transcribed (its start
    # inside the session): part of the wait from the session's end to its job, with the round cadence.
    held_rounds: int = 0


class MemoryRounds:
    def __init__(
        self,
        *,
        config: RuntimeConfig,
        poll_interval_s: float,
        stream: AgentStream,
        log: ConversationLog,
        trigger: Trigger,
        sessions: Callable[[np.ndarray], list[tuple[int, int]]],
        vad_since: Callable[[int], tuple[np.ndarray, int]],
        speech_pending_since: Callable[[], float | None],
        manager: MemoryManager,
        retrieval: RetrievalProcess,
        names: NameLearner,
        timeline: Timeline,
        times: ProcessTimes,
        privacy: PrivacyTurns | None = None,
        jobs: AgentQueue | None = None,
        unsure: UnsureMemory | None = None,
    ) -> None:
        self.privacy = privacy  # privacy hook: who stays out of memory
        self.unsure = unsure  # sessions of a person identity is unsure about: held, then released or dropped
        # The durable memory-writing queue (runtime/memory_queue.py): a session is committed as a job
        # before extraction, so a crash loses none; None: straight to the manager (tests, benches).
        self.jobs = jobs
        self.config, self.poll_interval_s, self.stream, self.log = config, poll_interval_s, stream, log
        self.trigger, self.sessions, self.vad_since = trigger, sessions, vad_since
        self.speech_pending_since = speech_pending_since
        self.manager, self.retrieval, self.names, self.timeline, self.times = manager, retrieval, names, timeline, times
        self.outcomes: list[SessionOutcome] = []
        self.finished: list[tuple[float, float, str | None]] = []  # (start, end, user) per session
        self._observers: list[Callable[[SessionHandled], None]] = []
        self._origin = 0.0  # memory management has finished everything before this
        self._queue: queue.Queue[tuple[float, bool] | None] = queue.Queue()
        # Lockstep (the stream waits for each round): a round waits for its sessions to be written;
        # otherwise it commits them to the queue and returns, and the worker writes them in order.
        self._lockstep = True
        self._thread: threading.Thread | None = None
        # Rounds that raised (their sessions stay for the next round) and rounds that then went through.
        self.counts = {"rounds_failed": 0, "rounds_recovered": 0}
        self._failing = False
        self._held_rounds = 0  # rounds in a row that left the next session open for a pending turn

    def failure_counts(self) -> dict[str, Any]:
        """Rounds failed and recovered, and what the store's failures cost the memory queue (memory/jobs.py):
        counts, and the keys of the jobs they hit (`jobs_hit`) and of those tried again (`jobs_retried`)."""
        if self.jobs is None:
            return dict(self.counts)
        jobs = self.jobs.jobs
        return {**self.counts, **jobs.counts, "jobs_hit": sorted(jobs.hit), "jobs_retried": sorted(jobs.retried)}

    def observe(self, callback: Callable[[SessionHandled], None]) -> None:
        """Tell `callback` each session handed to memory, timed (instrumentation)."""
        self._observers.append(callback)

    # -- the worker ---------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="egomem-memory", daemon=True)
        self._thread.start()
        if self.jobs is not None:
            self.jobs.start()

    def step(self, stream_t: float, *, lockstep: bool) -> None:
        """Each 80 ms step: the queue's worker yields while perception falls behind (never in lockstep)."""
        self._lockstep = lockstep
        if self.jobs is not None:
            self.jobs.step(stream_t, lockstep=lockstep)

    def request(self, t: float, *, wait: bool) -> None:
        """A round at stream time `t`; `wait`: return when it is done (lockstep)."""
        self._queue.put((t, False))
        if wait:
            # The round reads identity and the store that polls also write: done before the
            # stream moves on, a lockstep run is repeatable (memorize's resume).
            self._queue.join()

    def close(self, t: float) -> None:
        """End of stream at `t`: a final round closes every open session, then the thread ends."""
        self.end_of_stream()
        self._queue.put((t, True))
        self._queue.put(None)

    def end_of_stream(self) -> None:
        """The stream stopped: the queue's worker stops yielding to perception (there is none any more)
        and drains what is queued while the last turn is transcribed and the last round runs."""
        if self.jobs is not None:
            self.jobs.end_of_stream()

    def join(self, drain_timeout_s: float | None = DRAIN_TIMEOUT_S) -> Drained | None:
        """After `close`: the last round done, then every queued session written (for at most
        `drain_timeout_s`); the drain's report (None without a queue)."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        drained = None if self.jobs is None else self.jobs.stop(drain_timeout_s)  # once every job is written
        try:  # held sessions written by the drain: nobody can settle them any more
            self.settle_held(self.stream.now_s, final=True)
        except Exception:
            logger.exception("could not settle the held sessions at the end of the stream")
        return drained

    def _loop(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                self._queue.task_done()
                return
            t0 = time.perf_counter()
            try:
                self._round_retried(*item)
            finally:
                self.times.memory += time.perf_counter() - t0
                self._queue.task_done()

    def _round_retried(self, now_s: float, final: bool) -> None:
        """A round; one that raises leaves its sessions for the next round, and the final one, which has
        no next, is run again (FINAL_ATTEMPTS in all, with a backoff) before its sessions are given up."""
        for attempt in range(1, FINAL_ATTEMPTS + 1 if final else 2):
            try:
                self.round(now_s, final)
            except Exception:  # keep the process alive
                self.counts["rounds_failed"] += 1
                self._failing = True
                logger.exception("memory management failed (round at %.1f s, attempt %d)", now_s, attempt)
                if final and attempt < FINAL_ATTEMPTS:
                    time.sleep(FINAL_BACKOFF_S * 2 ** (attempt - 1))
                continue
            if self._failing:
                self.counts["rounds_recovered"] += 1
                self._failing = False
            return

    # -- a round ------------------------------------------------------------------------------
    def round(self, now_s: float, final: bool) -> None:
        self.settle_held(now_s)
        buffer = self.stream.buffer
        origin = max(self._origin, now_s - self.config.buffer_s + 1.0)
        listen = buffer.listen.window(origin, now_s)
        speak = buffer.speak.window(origin, now_s)
        if listen.size < SAMPLE_RATE:
            return
        if speak.size != listen.size:
            speak = np.resize(speak, listen.size) if speak.size else np.zeros_like(listen)
        first = round(origin * SAMPLE_RATE)  # the window's first sample (origins are whole steps)
        probs, vad_start = self.vad_since(first)
        labels = self.trigger.tag(listen, speak, KnownVAD(probs, vad_start - first))
        # Not final while a continuation by the same person could still merge into it.
        margin = max(self.config.session_margin_s, self.config.session_merge_gap_s)
        spans = [(origin + a * STEP_S, origin + (b + 1) * STEP_S) for a, b in self.sessions(labels)]
        # Read before the heard turns (`_cover_turns`): a turn is pending or heard at every moment,
        # so one that is neither now started after this point, i.e. after every span here.
        pending = self.speech_pending_since()
        for start, end in self._cover_turns(self._merge_same_person(spans), now_s):
            if not final and end > now_s - margin:
                break  # still open (or too fresh to be sure it ended): next round
            if not final and pending is not None and pending < end:
                # A turn that started inside this session is still open or being transcribed:
                # closing now would store the session without it (the phone call's whole 23 s
                # turn arrived after its session was closed "empty"). The next round decides,
                # with the turn heard; the stream's end flushes and transcribes it first.
                self._held_rounds += 1
                break
            self._finish_session(start, end)
            self._origin = end
            self._held_rounds = 0
        if final:
            self._origin = now_s
            self.settle_held(now_s, final=True)

    def _cover_turns(self, spans: list[tuple[float, float]], now_s: float) -> list[tuple[float, float]]:
        """Each heard turn belongs to exactly one session, whole: a session grows to cover every
        turn not yet stored that overlaps it (its start back to the turn's start, its end to the
        turn's end, rounded up to a whole step), and sessions that then overlap are one.

        Why grow rather than cut: a transcript cannot be split in time, and the trigger's span
        boundaries (from VAD and the assistant's channel, every 80 ms) often fall inside a long
        VAD turn that runs over several people. Left as they were, the turn would either reach
        no session (closed before it was transcribed: dropped) or two (stored twice)."""
        heard = [(h.start, h.end) for h in self.log.heard_turns(since=self._origin)]
        out: list[tuple[float, float]] = []
        for start, end in spans:
            if out and start < out[-1][1]:  # reached by the previous session's turns: one session
                prev_start, prev_end = out.pop()
                start, end = prev_start, max(end, prev_end)
            grown, trigger_end = True, end
            while grown:
                grown = False
                for s, e in heard:
                    if s < end and e > start and (s < start or e > end):
                        start, end, grown = min(start, s), max(end, e), True
            if end > trigger_end:  # the next round's window starts here: keep it on a whole step
                end = min(now_s, math.ceil(end / STEP_S - 1e-6) * STEP_S)
            out.append((start, end))
        return out

    def _merge_same_person(self, spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
        """Fuse the trigger with identity: spans of the same person less than
        `session_merge_gap_s` apart are one session (the trigger's spurious splits), while
        back-to-back sessions of different people stay apart."""
        out: list[tuple[float, float]] = []
        for start, end in spans:
            if out and start - out[-1][1] < self.config.session_merge_gap_s:
                prev_user = self._present_during(*out[-1])
                if prev_user is not None and prev_user == self._present_during(start, end):
                    out[-1] = (out[-1][0], end)
                    continue
            out.append((start, end))
        return out

    def _present_during(self, start: float, end: float) -> str | None:
        # Identity is confirmed a couple of polls after a person appears (debounce), so a
        # short session is attributed by what the polls decided just after it too.
        return self.log.present_during(start, end, lag_s=3 * self.poll_interval_s)

    def _turn_user(self, start: float, end: float) -> str | None:
        """Who said a turn its voice did not move (`turn_owner`): a user the polls during it (or one poll
        after) saw and who was current by a few polls later; UNSURE_SPEAKER when they saw someone but no
        such user; None when no poll was in time. Not the session's user: a session can span two visits
        (the next person comes within the trigger's gap), and the majority of its polls would write the
        second person's turns onto the first."""
        during = self.log.polls_between(start, end + self.poll_interval_s)
        after = self.log.polls_between(start, end + 3 * self.poll_interval_s)
        user = turn_owner(during, after)
        if user is not None and user != UNSURE_SPEAKER and self.privacy is not None:
            user = self.privacy.gate.resolve(user)  # privacy hook: a pending id that agreed
        return user

    def _finish_session(self, start: float, end: float) -> None:
        """Memory for one session. With several people in it (turns attributed to another
        enrolled person by voice, or said while another person was the current user), each
        person's turns are their own session text, with all the assistant's lines for context,
        so each person's facts land on them and what one says about another ("this is my husband
        Ben") links the speaker to that person."""
        heard = self.log.heard_overlapping(start, end)
        said = self.log.said_between(start, end + 1.0)
        user = self._present_during(start, end)
        if self.privacy is not None:  # privacy hook: a pending id that agreed is now a user
            user = self.privacy.gate.resolve(user)
        self.finished.append((start, end, user))
        by_person: dict[str | None, list[tuple[float, float, str]]] = {}
        for h in heard:
            by_person.setdefault(h.speaker or self._turn_user(h.start, h.end) or user, []).append(
                (h.start, h.end, h.text)
            )
        unknown = by_person.pop(UNKNOWN_VOICE, [])
        if unknown:
            what = f"{len(unknown)} turn(s) by an unknown voice kept out of memory"
            self.timeline.add(end, "memory", op="SKIPPED", user=None, text=what)
        unsure = by_person.pop(UNSURE_SPEAKER, [])
        if unsure:
            what = f"{len(unsure)} turn(s) whose speaker the polls could not vouch for kept out of memory"
            self.timeline.add(end, "memory", op="SKIPPED", user=None, text=what)
        speakers = [p for p in by_person if p is not None]
        self.timeline.add(
            end, "session", start=start, end=end, user=user, **({"speakers": speakers} if len(by_person) > 1 else {})
        )
        for person, own in by_person.items() or [(user, [])]:
            if self.privacy is not None and self.privacy.keeps_out(person):  # privacy hook
                self.timeline.add(end, "memory", op="SKIPPED", user=None, text="no consent: kept out of memory")
                continue
            self._process_session(start, end, person, own, said, own_span=len(by_person) > 1)

    def _process_session(
        self,
        start: float,
        end: float,
        user: str | None,
        heard: list[tuple[float, float, str]],
        said: list[tuple[float, str]],
        *,
        own_span: bool = False,
    ) -> None:
        """One person's session to memory. `own_span`: one of several people's, dated from their first
        turn to their last (a session spanning two visits holds two episodes, each when its person spoke)."""
        turns = [Turn(speaker="user", text=x, start=s, end=e) for s, e, x in heard]
        turns += [Turn(speaker="assistant", text=x, start=t, end=t) for t, x in said]
        turns.sort(key=lambda tr: tr.start or 0.0)
        wall = self.stream.wall
        first, last = (min(s for s, _, _ in heard), max(e for _, e, _ in heard)) if own_span and heard else (start, end)
        session = SessionText.dated(wall(first), wall(last), turns, user_name=self.names.name_of(user))
        ident = self.unsure.identification(user) if self.unsure is not None else _known(user)
        if self.jobs is None or self._lockstep:  # wait for it: a lockstep run stays repeatable
            outcome = self.hand_over(session, ident, held_rounds=self._held_rounds)
            self._written(end, user, outcome)
            if self.unsure is not None:
                self.unsure.after(user, ident, outcome, end)
            return
        queued, held = time.perf_counter(), self._held_rounds

        def done(outcome: SessionOutcome, result: JobResult | None) -> None:  # in the worker's thread
            queued_s = time.perf_counter() - queued
            timed = (0.0, 0.0, 0.0) if result is None else (result.wall_s, result.cpu_s, result.yielded_s)
            self._tell(SessionHandled(session, outcome, *timed[:2], queued_s, yielded_s=timed[2], held_rounds=held))
            self._written(end, user, outcome)
            if self.unsure is not None:
                self.unsure.after(user, ident, outcome, end)

        def refined(outcome: SessionOutcome, result: JobResult | None) -> None:  # the model's pass, later
            wall_s, cpu_s = (0.0, 0.0) if result is None else (result.wall_s, result.cpu_s)
            handled = SessionHandled(session, outcome, wall_s, cpu_s, time.perf_counter() - queued, refined=True)
            self._tell(handled)
            self._written(end, user, outcome, first=False)

        self.jobs.enqueue(session, ident, done, refined)  # committed now; the round goes on

    def _written(self, end: float, user: str | None, outcome: SessionOutcome, *, first: bool = True) -> None:
        """What follows a written session: its outcome kept (a session's first write only), its operations
        on the timeline (at the session's end), and Level 1 refreshed when the written user is the current one."""
        if first:
            self.outcomes.append(outcome)
        if not outcome.ok:
            self.timeline.add(end, "memory", op="FAILED", user=user, text=outcome.reason)
        for op, _, text in outcome.applied.ops:
            self.timeline.add(end, "memory", op=op, user=outcome.user_id, text=text)
        for c in outcome.checked:  # what the post-check kept out of memory, and why
            done = "" if c.replaced_by is None else f" -> {c.replaced_by.text}"
            op = "DROPPED" if c.replaced_by is None else "REWROTE"
            self.timeline.add(end, "memory", op=op, user=outcome.user_id, text=f"{c.item.text}{done} ({c.why})")
        if outcome.user_id and outcome.user_id == self.retrieval.current_user():
            self.retrieval.refresh_level1()

    def hand_over(
        self,
        session: SessionText,
        identification: Identification | None,
        *,
        via_queue: bool = True,
        held_rounds: int = 0,
    ) -> SessionOutcome:
        """A finished session to memory, waiting for it to be written: the one place sessions leave the
        runtime when the caller waits (lockstep rounds, `EgoMem.remember`, released held sessions); a
        live round enqueues instead (`_process_session`). `via_queue=False` writes through the manager
        directly (a held session: its job is already done). Observers (`observe`) are told each session
        once written, timed."""
        t0, c0 = time.perf_counter(), time.process_time()
        writer = (self.jobs or self.manager) if via_queue else self.manager
        outcome = writer.process(session, identification)
        wall_s = time.perf_counter() - t0
        cpu_s = time.process_time() - c0
        self._tell(SessionHandled(session, outcome, wall_s, cpu_s, queued_s=wall_s, held_rounds=held_rounds))
        return outcome

    def settle_held(self, now_s: float, *, final: bool = False) -> None:
        """Held sessions whose person was settled go to memory for them; those never settled are dropped
        (all of them when `final`). Written here, not through the queue: the queue already holds the
        session's job (its key is the episode's) as done, and a held episode stays in the store as held
        until this writes it."""
        if self.unsure is None:
            return
        due = self.unsure.due(now_s, final=final)
        for episode, user in due.release:
            try:
                session = self.manager.held_session(episode)
            except EgomemError as exc:  # deleted meanwhile ("forget me"): nothing to release
                self.timeline.add(now_s, "warning", text=f"held session {episode} gone: {exc}")
                continue
            outcome = self.hand_over(session, _known(user), via_queue=False)
            self._written(now_s, user, outcome)
        for episode, why in due.drop:
            try:
                if self.manager.drop_held(episode, why):
                    self.timeline.add(now_s, "memory", op="DROPPED", user=None, text=f"held session {episode}: {why}")
            except EgomemError as exc:
                self.timeline.add(now_s, "warning", text=f"held session {episode} not dropped: {exc}")

    def _tell(self, handled: SessionHandled) -> None:
        for callback in self._observers:
            callback(handled)


def _known(user: str | None) -> Identification | None:
    return Identification(IdentityStatus.KNOWN, user_id=user) if user else None


def turn_owner(
    during: list[tuple[float, str | None, str | None]], after: list[tuple[float, str | None, str | None]]
) -> str | None:
    """The owner of a turn from the polls (time, current user, sighting) `during` it (to a poll after its
    end) and a few polls `after` it (the same start, a later end). The current user is debounced: at a
    visit's first turn it still names the person who left, and it names the newcomer only a poll or two
    later. So the owner is a user those polls saw themselves, who was current during or just after the
    turn (the most seen; a tie: the later). A newcomer seen only as someone unknown during the turn is
    the user enrolled for them just after it. When no poll saw anyone (off camera, silent between
    words), there is no evidence against the current user: the latest. Polls that saw someone but none
    of these: UNSURE_SPEAKER (kept out of memory: guessing could write one person's words onto another)."""
    if not during:
        return None
    seen = [s for _, _, s in during if s is not None]
    if not seen:
        return next((u for _, u, _ in reversed(during) if u is not None), None)
    current_after = {u for _, u, _ in after if u is not None}
    counts: dict[str, tuple[int, int]] = {}
    for i, s in enumerate(seen):
        if s != SOMEONE and s in current_after:
            counts[s] = (counts.get(s, (0, 0))[0] + 1, i)
    if counts:
        return max(counts, key=lambda u: counts[u])
    if all(s == SOMEONE for s in seen):  # a newcomer: the user this same person became just after
        was = during[0][1]
        return next((s for _, u, s in after if s not in (None, SOMEONE) and s == u and u != was), UNSURE_SPEAKER)
    return UNSURE_SPEAKER
