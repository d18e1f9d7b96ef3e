"""LoCoMo (Maharana et al. 2024, CC BY-NC) as read by the benchmarks (`bench locomo`, `bench locomo-qa`)
and the training data builder (`egomem data convert locomo`): conversations with their sessions'
turns, the questions of categories 1-4 with their evidence turns (malformed or unknown evidence ids
are skipped and counted), the generated observations and session summaries.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from egomem.errors import InputError
from egomem.retrieval.search import EpisodeTurn

CATEGORIES = (1, 2, 3, 4)
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
DIA_ID = re.compile(r"^D\d+:\d+$")


@dataclass
class Turn:
    dia_id: str
    speaker: str
    date: str
    text: str
    session: int = 1


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    speakers: list[str]
    questions: list[tuple[str, int, list[str]]] = field(default_factory=list)  # question, category, evidence
    answers: list[str] = field(default_factory=list)  # the gold answer of each question (same order)
    observations: list[tuple[str, str, str]] = field(default_factory=list)  # speaker, fact, dia_id
    summaries: dict[int, str] = field(default_factory=dict)  # session number -> LoCoMo's session summary


def load_locomo(path: Path) -> tuple[list[Conversation], dict[str, int]]:
    file = path / "locomo10.json" if path.is_dir() else path
    try:
        raw = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise InputError(f"LoCoMo file not found: {file}") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"cannot read LoCoMo file {file}: {exc}") from exc
    if not isinstance(raw, list):
        raise InputError(f"{file}: expected a list of conversations")
    counts = {"malformed_evidence_ids": 0, "questions_without_evidence": 0}
    convs: list[Conversation] = []
    for item in raw:
        if not isinstance(item, dict) or not isinstance(item.get("conversation"), dict):
            raise InputError(f"{file}: a conversation entry has no 'conversation' object")
        conv = item["conversation"]
        turns: list[Turn] = []
        n = 1
        while f"session_{n}" in conv or f"session_{n}_date_time" in conv:
            date = str(conv.get(f"session_{n}_date_time", ""))
            for t in conv.get(f"session_{n}", []) or []:
                if not isinstance(t, dict) or "dia_id" not in t or "speaker" not in t:
                    raise InputError(f"{file}: a turn of session {n} lacks dia_id or speaker")
                turns.append(Turn(t["dia_id"], t["speaker"], date, t.get("text", ""), n))
            n += 1
        known = {t.dia_id for t in turns}
        c = Conversation(
            str(item.get("sample_id", len(convs))), turns, [conv.get("speaker_a", ""), conv.get("speaker_b", "")]
        )
        for qa in item.get("qa", []):
            if qa.get("category") not in CATEGORIES:
                continue
            ev = []
            for e in qa.get("evidence", []):
                if isinstance(e, str) and DIA_ID.match(e) and e in known:
                    ev.append(e)
                else:
                    counts["malformed_evidence_ids"] += 1
            if not ev:
                counts["questions_without_evidence"] += 1
                continue
            c.questions.append((str(qa["question"]), int(qa["category"]), ev))
            c.answers.append(str(qa.get("answer", "")))
        c.observations, c.summaries = _observations(item), _summaries(item)
        convs.append(c)
    return convs, counts


def _observations(item: dict[str, Any]) -> list[tuple[str, str, str]]:
    """LoCoMo's generated per-session facts `(speaker, fact, dia_id)`; odd entries are skipped."""
    out: list[tuple[str, str, str]] = []
    for sess in (item.get("observation") or {}).values():
        for speaker, facts in sess.items() if isinstance(sess, dict) else ():
            for f in facts if isinstance(facts, list) else ():
                if isinstance(f, list) and len(f) == 2 and isinstance(f[0], str) and isinstance(f[1], str):
                    out.append((str(speaker), f[0], f[1]))
    return out


def _summaries(item: dict[str, Any]) -> dict[int, str]:
    out: dict[int, str] = {}
    for key, text in (item.get("session_summary") or {}).items():
        m = re.fullmatch(r"session_(\d+)_summary", str(key))
        if m and isinstance(text, str):
            out[int(m.group(1))] = text
    return out


def truncate(conv: Conversation, max_turns: int) -> Conversation:
    turns = conv.turns[:max_turns]
    kept = {t.dia_id for t in turns}
    keep = [i for i, q in enumerate(conv.questions) if all(e in kept for e in q[2])]
    answers = [conv.answers[i] for i in keep] if len(conv.answers) == len(conv.questions) else []
    questions = [conv.questions[i] for i in keep]
    return Conversation(conv.sample_id, turns, conv.speakers, questions, answers, conv.observations, conv.summaries)


def session_time(date: str) -> float:
    """LoCoMo's "1:56 pm on 8 May, 2023" as epoch seconds (UTC); 0 when unparsable."""
    try:
        return datetime.strptime(date.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC).timestamp()
    except ValueError:
        return 0.0


def episode_sessions(conv: Conversation) -> tuple[list[list[Turn]], list[tuple[float, list[EpisodeTurn]]]]:
    """The conversation's turns grouped by session, and each session as the product takes it:
    (start time, the speakers' turns)."""
    sessions: dict[int, list[Turn]] = defaultdict(list)
    for t in conv.turns:
        sessions[t.session].append(t)
    groups = list(sessions.values())
    return groups, [(session_time(ts[0].date), [EpisodeTurn(t.speaker, t.text) for t in ts]) for ts in groups]
