"""Running a scenario through the product, the way `egomem run` and the demo do.

- `run_audio`: each day's recording through the whole agent (`build_agent`: VAD, ASR,
  face and voice identity, trigger, dialog model, memory manager), one store for both days.
- `run_transcript`: the gold user turns of each session handed straight to the same
  agent's MemoryManager, with identity given (day 1: a new person, day 2: the user made
  for them on day 1), and the same dialog model and retrieval answering each turn: the
  text-only upper bound that separates ASR and identity errors from extraction errors.

The extraction CPU time is `time.process_time()` around `MemoryManager.process` (extract,
update agent, write), as the agent's instrumentation hook reports it (`on_session_handled`).
In the audio variant the agent's other threads run meanwhile, so there it is an upper bound;
the transcript figure is the clean one.
"""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path

from egomem.bench.convo.media import RenderedDay, Visit
from egomem.bench.convo.score import Observation, current_facts
from egomem.config import Config
from egomem.identity.types import Identification, IdentityStatus
from egomem.llm.base import LLMProvider
from egomem.memory.items import SessionText, Turn
from egomem.runtime.agent import EgoMem
from egomem.runtime.build import Models, Services, build_agent
from egomem.runtime.memory_rounds import SessionHandled
from egomem.runtime.timeline import Timeline
from egomem.store.base import MemoryStore
from egomem.stream.sources import read_recording, replay
from egomem_eval.convo.scenario import Scenario, Session

DAY_S = 86_400.0
MIN_OVERLAP_S = 2.0  # one identity poll


def _snapshot(store: MemoryStore, obs: Observation) -> None:
    obs.day1_facts = {p: [f.text for f in current_facts(store, ids)] for p, ids in obs.person_users.items()}


# -- transcript ---------------------------------------------------------------------------
def run_transcript(
    sc: Scenario, store: MemoryStore, cfg: Config, models: Models, llm: LLMProvider | None = None
) -> Observation:
    """`llm`: a language model already built (its usage is then the caller's to read); None: from `cfg`."""
    obs = Observation(person_users={p: set() for p in sc.names})
    services = Services(cfg, store, models, llm=llm)
    for day in (1, 2):
        if day == 2:
            _snapshot(store, obs)
        timeline = Timeline()
        agent = build_agent(services, timeline)
        agent.on_session_handled(partial(_timed, obs))
        origin = time.time() - (2 - day) * DAY_S
        for i, s in enumerate(x for x in sc.sessions if x.day == day):
            _transcript_session(sc, s, agent, timeline, obs, origin + i * 600.0)
    return obs


def _transcript_session(
    sc: Scenario, s: Session, agent: EgoMem, timeline: Timeline, obs: Observation, start: float
) -> None:
    known = sorted(obs.person_users[s.person])
    uid = known[0] if known else None
    if uid is not None:  # the person is recognised (identity is given here): Level 1, greeting
        before = len(timeline.of_type("assistant"))
        for _ in range(5):
            agent.identified(Identification(IdentityStatus.KNOWN, user_id=uid), at=start)
            if agent.current_user() == uid:
                break
        obs.greetings[s.person] = [e.fields["text"] for e in timeline.of_type("assistant")[before:]]
    turns: list[Turn] = []
    asks = [q for q in sc.level2 if q.asker == s.person] if s.day == 2 else []
    for k, u in enumerate(s.turns):
        t = k * 8.0
        turns.append(Turn(speaker="user", text=u.text, start=t, end=t + 3.0))
        answer = agent.reply(u.text, t + 3.0, uid)
        turns.append(Turn(speaker="assistant", text=answer, start=t + 3.5, end=t + 5.0))
        if asks and u.kind.startswith("ask_"):
            obs.answers[s.person] = answer
    session = SessionText.dated(start, start + 8.0 * len(s.turns), turns)
    ident = Identification(IdentityStatus.KNOWN, user_id=uid) if uid else Identification(IdentityStatus.NEW)
    outcome = agent.remember(session, ident)
    if outcome.user_id:
        obs.person_users[s.person].add(outcome.user_id)


def _timed(obs: Observation, done: SessionHandled) -> None:
    obs.cpu_s.append(done.cpu_s)
    obs.wall_s.append(done.wall_s)


# -- audio --------------------------------------------------------------------------------
def run_audio(sc: Scenario, days: list[RenderedDay], store: MemoryStore, cfg: Config, models: Models) -> Observation:
    obs = Observation(person_users={p: set() for p in sc.names})
    services = Services(cfg, store, models)
    for day, rd in enumerate(days, 1):
        if day == 2:
            _snapshot(store, obs)
        timeline = Timeline()
        agent = build_agent(services, timeline)
        agent.on_session_handled(lambda done: obs.cpu_s.append(done.cpu_s))
        rec = read_recording(Path(rd.path), fps=cfg.runtime.video_fps)
        result = agent.run(replay(rec), lockstep=True)
        _map_people(rd, timeline, result.duration_s, obs)
        _map_episodes(rd, store, agent.wall_origin, [o.episode_id for o in result.outcomes if o.ok], obs)
        if day == 2:
            _dialog_day2(sc, rd, timeline, obs)
    return obs


def _overlap(a0: float, a1: float, b0: float, b1: float) -> float:
    return max(0.0, min(a1, b1) - max(a0, b0))


def _map_people(rd: RenderedDay, timeline: Timeline, end: float, obs: Observation) -> None:
    """Each visit's user: the one that was the current user (Level 1) longest during it. Not
    any user seen during it: the previous visitor stays current for a few polls after the
    next one appears (identity confirmation), which is latency, not a merge."""
    switches = [(e.time, e.fields.get("user")) for e in timeline.of_type("user")]
    spans = [(t0, t1, uid) for (t0, uid), (t1, _) in zip(switches, [*switches[1:], (end, None)], strict=True) if uid]
    for v in rd.visits:
        shares: dict[str, float] = {}
        for t0, t1, uid in spans:
            shares[str(uid)] = shares.get(str(uid), 0.0) + _overlap(t0, t1, v.start, v.end)
        best = max(shares, key=lambda u: shares[u], default=None)
        if best is not None and shares[best] >= MIN_OVERLAP_S:
            obs.person_users[v.person].add(best)


def _map_episodes(rd: RenderedDay, store: MemoryStore, origin: float, episodes: list[str], obs: Observation) -> None:
    """Users this day's sessions were written to (a session no one was recognised in makes one)."""
    users = {u.id for u in store.list_users(include_placeholders=False)}
    for eid in episodes:
        ep = store.get_episode(eid)
        s, e = ep.start - origin, ep.end - origin
        # Every visit whose speech it holds (half a turn or more): an episode holding two people's
        # turns maps its user to both, which the scorer counts as a merge (before, only the visit it
        # overlapped most, so a second visitor's life written onto the first went uncounted).
        holders = [v for v in rd.visits if any(_overlap(s, e, a, b) >= 0.5 * (b - a) for a, b in v.turns)]
        if not holders:
            best = max(rd.visits, key=lambda v: _overlap(s, e, v.start, v.end))
            holders = [best] if _overlap(s, e, best.start, best.end) > 0 else []
        for v in holders:
            obs.person_users[v.person].update(u for u in ep.participants if u in users)


def _dialog_day2(sc: Scenario, rd: RenderedDay, timeline: Timeline, obs: Observation) -> None:
    said = [(e.time, str(e.fields["text"])) for e in timeline.of_type("assistant")]
    day2 = [s for s in sc.sessions if s.day == 2]
    for s, v in zip(day2, rd.visits, strict=True):
        obs.greetings[s.person] = [x for t, x in said if v.start <= t < v.end]
        for k, u in enumerate(s.turns):
            if u.kind.startswith("ask_"):
                obs.answers[s.person] = _answer_after(said, v, k)


def _answer_after(said: list[tuple[float, str]], v: Visit, k: int) -> str:
    """What the assistant said between the end of turn k and the start of the next one."""
    start = v.turns[k][1] - 0.5
    end = v.turns[k + 1][0] if k + 1 < len(v.turns) else v.end
    return " ".join(x for t, x in said if start <= t < end)
