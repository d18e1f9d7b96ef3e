"""Token layout of a stream and its training samples (the paper's Section 4 / Appendix C).

Positions (80 ms steps) of a stream of T <= max_steps:
- 0-511: the Level-1 MemChunk (the current user's profile), `<pad>` after its tokens;
- 512-767: the Level-2 MemChunk (facts about people the user knows);
- 768-T: the dialog: a text channel (the assistant's monologue, `<pad>` where silent)
  and two audio channels (listening, speaking), one row of codes per step.

Samples share a stream and differ in their MemChunks and supervision masks:
- `level1` (one per session): the session's user's profile in Level-1; text and speaking
  tokens of that session supervised;
- `level2_query` and `level2_answer` (two per Level-2 turn): the `<retr>` query tokens
  supervised with the previous Level-2 turn's chunk of the session in Level-2 (empty for
  the first), then the answer's text and speaking tokens supervised with the retrieved
  facts in Level-2;
- `trigger` (one per stream): every dialog step labelled 0/1/2/3 by the trigger's own
  labelling (memory/trigger/labels.py).
Spans are [start, end) stream positions; a sample whose spans fall outside the truncated
stream is dropped (a Level-2 sample also when its span was cut).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from egomem.retrieval.profile import RELATIONS_TITLE, SECTION_TITLES
from egomem.schemas import FactKind
from egomem.stream.clock import STEP_S
from egomem_training.data.plan import SessionPlan
from egomem_training.data.script import Retr, User
from egomem_training.data.text_tokens import ANSWER, RETR, TextTokenizer

LEVEL1_SLOT = (0, 512)
LEVEL2_SLOT = (512, 768)
DIALOG_START = LEVEL2_SLOT[1]
Span = tuple[int, int]


def level1_text(user: User) -> str:
    """The profile in the product's Level-1 shape (retrieval/profile.py section titles)."""
    p = user.profile
    parts = [f"Current user: {user.name}"]
    for kind, items in (
        (FactKind.PERSONA, p.about),
        (FactKind.FACT, p.facts),
        (FactKind.PREFERENCE, p.preferences),
        (FactKind.SUMMARY, p.summaries),
    ):
        if items:
            parts += [SECTION_TITLES[kind] + ":", *(f"- {x}" for x in items)]
    if user.social:
        parts += [RELATIONS_TITLE + ":", *(f"- {r.name}: {r.relation}" for r in user.social)]
    return "\n".join(parts)


def level2_text(facts: list[str]) -> str:
    """Retrieved facts one per line, as retrieval/social.render_level2 writes them."""
    return "\n".join(f"- {f}" for f in facts)


def query_text(retr: Retr) -> str:
    return f"{RETR}:\n{' '.join(retr.relations)}\n{' '.join(retr.keywords)}{ANSWER}"


def slot_tokens(tok: TextTokenizer, text: str, slot: Span) -> tuple[list[int], bool]:
    """The chunk's tokens cut to its slot; True when cut."""
    ids = tok.encode(text) if text else []
    size = slot[1] - slot[0]
    return ids[:size], len(ids) > size


def monologue(sessions: list[SessionPlan], steps: int, pad_id: int) -> np.ndarray:
    """The dialog's text channel: each query and answer at its planned steps, cut at `steps`."""
    text = np.full(steps, pad_id, dtype=np.int32)
    for s in sessions:
        for t in s.turns:
            for start, ids in ((t.query_start, t.query_tokens), (t.text_start, t.text_tokens)):
                if start is None or not ids or start >= steps:
                    continue
                seg = np.asarray(ids[: steps - start], dtype=np.int32)
                if np.any(text[start : start + seg.size] != pad_id):  # the planner keeps them apart
                    raise AssertionError(f"monologue overlap at step {start}")
                text[start : start + seg.size] = seg
    return text


@dataclass
class Sample:
    task: str  # level1 | level2_query | level2_answer | trigger
    session_id: str
    user_id: str
    turn: int  # -1 for level1 / trigger
    level1_text: str
    level2_text: str
    text_spans: list[Span] = field(default_factory=list)
    speak_spans: list[Span] = field(default_factory=list)
    label_spans: list[Span] = field(default_factory=list)


def _clip(span: Span, total: int) -> Span | None:
    a, b = max(span[0], DIALOG_START), min(span[1], total)
    return (a, b) if b > a else None


def samples_for(
    sessions: list[SessionPlan], users: dict[str, User], facts: dict[tuple[int, int], list[str]], dialog_steps: int
) -> list[Sample]:
    """The samples of one stream (see the module docstring); `facts[(session, turn)]` is
    the Level-2 turn's retrieved facts."""
    total = DIALOG_START + dialog_steps
    out: list[Sample] = []
    for s in sessions:
        user = users[s.user_id]
        l1 = level1_text(user)
        end = int(s.end_s / STEP_S) + 1  # the step holding the session's last sound, included
        span = _clip((DIALOG_START + s.start, DIALOG_START + end), total)
        if span is not None:
            out.append(Sample("level1", s.session_id, s.user_id, -1, l1, "", [span], [span]))
        previous: list[str] = []
        for t in s.turns:
            if t.level != 2 or t.query_start is None:
                continue
            q = (DIALOG_START + t.query_start, DIALOG_START + t.text_start)
            a_text = (DIALOG_START + t.text_start, DIALOG_START + max(t.text_end, t.reply_end))
            a_speak = (DIALOG_START + t.reply_start, DIALOG_START + t.reply_end)
            if _clip(q, total) == q:
                out.append(Sample("level2_query", s.session_id, s.user_id, t.turn, l1, level2_text(previous), [q]))
            if _clip(a_text, total) == a_text and _clip(a_speak, total) == a_speak:
                now = facts[(s.index, t.turn)]
                out.append(
                    Sample("level2_answer", s.session_id, s.user_id, t.turn, l1, level2_text(now), [a_text], [a_speak])
                )
            previous = facts[(s.index, t.turn)]
    if sessions:
        out.append(Sample("trigger", "", "", -1, "", "", label_spans=[(DIALOG_START, total)]))
    return out
