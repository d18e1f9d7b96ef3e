"""Timing of one stream: where every user turn, `<retr>` query, monologue and reply falls,
in 80 ms steps from the start of the dialog part (step 0 = stream position 768).

Timed as the runtime answers (egomem_eval/trigger/synth.py): a reply starts 0.8-1.1 s after
the user stops; the next turn starts 0.3-1.5 s after the reply ends, unless it
interrupts (probability `interrupt_p`, drawn for every turn that has a next one): then the
user starts 30-70 % into the reply and the assistant stops 3 steps (240 ms) later, its
unspoken monologue dropped with it. A Level-2 reply is preceded by its query
`<retr>:\\n<relations>\\n<keywords><answer>` on the text channel, after the user's turn, so
the reply waits for it. Monologue text starts `TEXT_LEAD` steps before its audio.
Sessions follow each other 1-6 s apart; the same user's next session comes after the
trigger's away-and-back gap (synth.SAME_USER_GAP_S), so it is a new session for the trigger too.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from egomem.media import SAMPLE_RATE
from egomem.stream.clock import SAMPLES_PER_STEP, STEP_S
from egomem_eval.trigger.synth import REPLY_AFTER_S, SAME_USER_GAP_S

TEXT_LEAD = 2  # monologue text leads its audio by 2 steps (the paper's alignment)
STOP_AFTER = 3  # steps an interrupted assistant keeps speaking before it stops
MIN_INTERRUPTIBLE_S = 1.0  # a shorter reply is over before anyone could cut it


@dataclass
class TurnPlan:
    turn: int
    level: int
    user_start: int  # step of the user's speech onset
    user_samples: int
    reply_start: int  # step of the reply's audio onset
    reply_samples: int  # samples of the reply that are spoken (fewer when interrupted)
    text_start: int  # step of the first monologue token (reply_start - TEXT_LEAD)
    text_tokens: list[int]
    query_start: int | None = None  # Level-2: step of `<retr>`
    query_tokens: list[int] = field(default_factory=list)
    interrupt_drawn: bool = False  # the draw said "the next turn interrupts"
    interrupted: bool = False  # ... and the reply was long enough to be cut

    @property
    def user_end(self) -> int:
        return self.user_start + math.ceil(self.user_samples / SAMPLES_PER_STEP)

    @property
    def reply_end(self) -> int:
        return self.reply_start + math.ceil(self.reply_samples / SAMPLES_PER_STEP)

    @property
    def text_end(self) -> int:
        return self.text_start + len(self.text_tokens)


@dataclass
class SessionPlan:
    index: int
    session_id: str
    user_id: str
    turns: list[TurnPlan]

    @property
    def start(self) -> int:
        return self.turns[0].user_start

    @property
    def end_s(self) -> float:
        """The end of the session's last turn (user or assistant), in seconds."""
        last = self.turns[-1]
        return max(
            last.user_start * STEP_S + last.user_samples / SAMPLE_RATE,
            last.reply_start * STEP_S + last.reply_samples / SAMPLE_RATE,
        )


@dataclass
class LineTokens:
    """What the planner needs of one turn: audio lengths (samples) and token ids."""

    level: int
    user_samples: int
    reply_samples: int
    answer_tokens: list[int]
    query_tokens: list[int]


def _steps(seconds: float) -> int:
    return math.ceil(seconds / STEP_S - 1e-9)


def plan_session(
    rng: np.random.Generator,
    index: int,
    session_id: str,
    user_id: str,
    lines: list[LineTokens],
    start: int,
    text_busy: int,
    interrupt_p: float,
) -> SessionPlan:
    """The turns of one session whose first speech is at step `start`; `text_busy`: the
    first step free on the text channel (the previous session's monologue may run on)."""
    turns: list[TurnPlan] = []
    t, speak_busy = start, 0
    for k, ln in enumerate(lines):
        user_end = t + math.ceil(ln.user_samples / SAMPLES_PER_STEP)
        gap = _steps(REPLY_AFTER_S + rng.uniform(0.0, 0.3))
        lq = len(ln.query_tokens)
        reply_start = max(user_end + gap, user_end + lq + TEXT_LEAD, text_busy + lq + TEXT_LEAD, speak_busy)
        tp = TurnPlan(
            turn=k,
            level=ln.level,
            user_start=t,
            user_samples=ln.user_samples,
            reply_start=reply_start,
            reply_samples=ln.reply_samples,
            text_start=reply_start - TEXT_LEAD,
            text_tokens=list(ln.answer_tokens),
            query_start=reply_start - TEXT_LEAD - lq if lq else None,
            query_tokens=list(ln.query_tokens),
        )
        if k + 1 < len(lines):
            tp.interrupt_drawn = bool(rng.random() < interrupt_p)
            frac = rng.uniform(0.3, 0.7)  # drawn always, so one draw's outcome never shifts the others
            if tp.interrupt_drawn and ln.reply_samples / SAMPLE_RATE >= MIN_INTERRUPTIBLE_S:
                tp.interrupted = True
                nxt = reply_start + int(frac * ln.reply_samples / SAMPLES_PER_STEP)
                cut = nxt + STOP_AFTER
                tp.reply_samples = min(ln.reply_samples, (cut - reply_start) * SAMPLES_PER_STEP)
                tp.text_tokens = tp.text_tokens[: max(0, cut - tp.text_start)]
            else:
                nxt = _steps(tp.reply_end * STEP_S + rng.uniform(0.3, 1.5))
        else:
            nxt = tp.reply_end
        turns.append(tp)
        speak_busy, text_busy = tp.reply_end, max(text_busy, tp.text_end)
        t = nxt
    return SessionPlan(index, session_id, user_id, turns)


def next_session_start(rng: np.random.Generator, prev: SessionPlan, same_user: bool) -> int:
    gap = rng.uniform(*SAME_USER_GAP_S) if same_user else rng.uniform(1.0, 6.0)
    return _steps(prev.end_s + gap)


def plan_record(sessions: list[SessionPlan]) -> list[dict[str, Any]]:
    """The plan as plain data for a sample's metadata."""
    return [
        {
            "index": s.index,
            "session_id": s.session_id,
            "user_id": s.user_id,
            "turns": [
                {k: v for k, v in asdict(t).items() if k not in ("text_tokens", "query_tokens")}
                | {"text_len": len(t.text_tokens), "query_len": len(t.query_tokens)}
                for t in s.turns
            ],
        }
        for s in sessions
    ]
