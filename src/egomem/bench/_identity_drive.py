"""Driving the product through one world of `bench identity`, in transcript mode.

One store per world; one agent per day (`build_agent`, as `egomem run` builds it, consent
`implicit` as for a recording the user owns), the day's wall origin a day after the last. For each
visit, every `retrieval.poll_interval_s` of stream time the agent's own identifier (the one its
identity poll calls) identifies the person from their real photo and the last `retrieval.window_s`
of their real LibriSpeech speech; the result goes to `EgoMem.identified` (debounce, enrolment
through the consent gate, Level 1, the dialog model's greeting or "What's your name?") and, when it
confirms the current user, to the identifier's `learn` (key refresh), as the identity poll does.
The person's lines go to `EgoMem.reply` (the dialog model answers, its `<retr>` queries served)
and the visit, as a session, to `EgoMem.remember` with the Level-1 user that held most of the
visit (as the memory rounds hand a session over). Between visits the polls observe nobody.

What transcript mode bypasses: the stream itself (no camera frames or microphone audio through
the buffer), VAD and turn detection, ASR (the lines are the script's text), the episodic trigger
(a visit is a session), per-turn voice attribution and turn splitting, the name learner of heard
turns, and the assistant's own voice on the microphone. The person speaks during every poll.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from egomem.errors import NotFoundError
from egomem.llm.base import LLMProvider
from egomem.media import SAMPLE_RATE
from egomem.memory.items import SessionText, Turn
from egomem.perception.face import load_image
from egomem.runtime.agent import EgoMem
from egomem.runtime.build import Models, Services, build_agent
from egomem.runtime.conversation_log import majority
from egomem.runtime.timeline import Timeline
from egomem.store.base import MemoryStore
from egomem_eval.identity.world_score import FactRecord, VisitRecord
from egomem_eval.identity.worlds import World, speech_windows

DAY_S = 86_400.0
LEAD_S = 4.0  # the person is there (polled) before their first line
LINE_S = 8.0  # one line every 8 s, each 3 s long, answered at its end
GAP_S = 12.0  # nobody in front of the assistant between visits


class _AgentServices(Services):
    """Services that keep each identifier they build, so the drive polls the agent's own one."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.built: list[Any] = []

    def identifier(self) -> Any:
        ident = super().identifier()
        self.built.append(ident)
        return ident


@dataclass
class WorldRun:
    visits: list[VisitRecord]
    facts: list[FactRecord]
    poll_s: list[float] = field(default_factory=list)  # wall seconds per identify call


def run_world(
    world: World, store: MemoryStore, models: Models, llm: LLMProvider, speech_of: dict[str, np.ndarray]
) -> WorldRun:
    """`world` through the product on `store` (empty), with `models` and `llm` shared by all
    worlds; `speech_of`: speaker -> their speech."""
    cfg = models.config
    poll, window = cfg.retrieval.poll_interval_s, cfg.retrieval.window_s
    drive = _AgentServices(cfg, store, models, llm=llm)
    speech = {p.key: speech_windows(speech_of[p.speaker], window, poll, SAMPLE_RATE) for p in world.people}
    heard = {p.key: 0 for p in world.people}
    records: list[VisitRecord] = []
    episodes: dict[str, str] = {}  # episode id -> person
    poll_s: list[float] = []
    origin0 = time.time() - world.days * DAY_S
    seen_today: set[tuple[str, int]] = set()
    for day in range(1, world.days + 1):
        timeline = Timeline()
        agent = build_agent(drive, timeline, wall_origin=origin0 + (day - 1) * DAY_S)
        identifier = drive.built[-1]
        t = 0.0
        for v in (x for x in world.visits if x.day == day):
            for _ in range(int(GAP_S / poll)):  # nobody there
                t += poll
                agent.identified(identifier.identify(None, []), at=t)
            frame = load_image(v.photo)
            start = t
            end = start + LEAD_S + LINE_S * len(v.lines)
            line_ends = [start + LEAD_S + LINE_S * k + 3.0 for k in range(len(v.lines))]
            rec = VisitRecord(v.person, day, (v.person, day) not in seen_today, v.says_name, None)
            seen_today.add((v.person, day))
            turns: list[Turn] = []
            k = 0
            while t + poll <= end:
                t += poll
                while k < len(line_ends) and line_ends[k] <= t:  # lines finished before this poll
                    _reply(agent, v.lines[k].text, line_ends[k], turns, rec)
                    k += 1
                audio = speech[v.person][heard[v.person] % len(speech[v.person])]
                heard[v.person] += 1
                before = len(timeline.of_type("assistant"))
                t0 = time.perf_counter()
                ident = identifier.identify(audio, [frame])
                poll_s.append(time.perf_counter() - t0)
                agent.identified(ident, at=t)
                current = agent.current_user()
                if ident.user_id is not None and ident.user_id == current:
                    identifier.learn(ident)  # key refresh from confirmed matches, as the identity poll does
                rec.level1.append(current)
                rec.proactive += [str(e.fields["text"]) for e in timeline.of_type("assistant")[before:]]
            while k < len(line_ends):
                _reply(agent, v.lines[k].text, line_ends[k], turns, rec)
                k += 1
            who = majority([(u, True) for u in rec.level1])  # as the memory rounds pick a session's user
            session = SessionText.dated(agent.wall_origin + start, agent.wall_origin + end, turns)
            outcome = agent.remember_visit(session, who, end)  # an unsure person's session may be held
            episodes[outcome.episode_id] = v.person
            rec.user = outcome.user_id
            records.append(rec)
            t = end
        agent.end_of_visits(t)  # held sessions of people settled are written, the rest dropped
    _final_users(store, records, list(episodes))
    return WorldRun(records, _facts(store, episodes), poll_s)


def _reply(agent: EgoMem, text: str, at: float, turns: list[Turn], rec: VisitRecord) -> None:
    turns.append(Turn(speaker="user", text=text, start=at - 3.0, end=at))
    answer = agent.reply(text, at, agent.current_user())
    rec.replies.append(answer)
    if answer:
        turns.append(Turn(speaker="assistant", text=answer, start=at + 0.5, end=at + 2.0))


def _final_users(store: MemoryStore, records: list[VisitRecord], episode_ids: list[str]) -> None:
    """Each visit's user after every repair memory made later (merges move episodes)."""
    real = {u.id for u in store.list_users(include_placeholders=False)}
    for rec, eid in zip(records, episode_ids, strict=True):
        try:
            parts = [u for u in store.get_episode(eid).participants if u in real]
        except NotFoundError:
            parts = []
        if parts:
            rec.user = parts[0]
        elif rec.user is not None and rec.user not in real:
            rec.user = None


def _facts(store: MemoryStore, episodes: dict[str, str]) -> list[FactRecord]:
    out = []
    for u in store.list_users(include_placeholders=False):
        for f in store.list_facts(u.id):
            out.append(FactRecord(u.id, episodes.get(f.source_episode or ""), f.text))
    return out
