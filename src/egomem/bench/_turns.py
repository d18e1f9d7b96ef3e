"""Scoring who each written turn was written onto, against the stream's script.

`bench realtime` maps people to users by their visits (bench/_visits.py: each user belongs to its
majority person, each person has an "own" user). That says who Level 1 named; it cannot see a
turn written onto the wrong person's memory while Level 1 was right, or a visit's first line
written onto the person who had just left. This does, turn by turn: each user turn the memory
process wrote (its stream times and the user it was written to) is matched to the script line it
overlaps most, and counted as

- right: written to the speaker's own user;
- wrong person: written to a user that belongs to someone else (one person's words in another's
  memory: a merge at the level of a turn, the harm `purity` does not see);
- split: written to a user of nobody else's that is not the speaker's own (a second user for the
  same person, or a user no visit maps to);

and each script line no written turn overlaps is unwritten (not heard, kept out as an unknown
voice, or held and dropped). The rates are over written turns; unwritten over script lines.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


class ScriptLine(Protocol):
    @property
    def start(self) -> float: ...
    @property
    def end(self) -> float: ...
    @property
    def speaker(self) -> str: ...


@dataclass(frozen=True)
class WrittenTurn:
    start: float  # stream seconds
    end: float
    user: str  # the user it was written to


def _overlap(a0: float, a1: float, b0: float, b1: float) -> float:
    return max(0.0, min(a1, b1) - max(a0, b0))


def score_turns(
    written: Sequence[WrittenTurn],
    lines: Sequence[ScriptLine],
    own: Mapping[str, str],
    owner: Mapping[str, str],
    *,
    by_voice: Mapping[float, Mapping[str, Any]] | None = None,
    examples: int = 5,
) -> dict[str, Any]:
    """`own`: person -> their own user; `owner`: user -> the person it belongs to (bench/_visits.py);
    `by_voice`: the end time (rounded to 0.01 s) of each turn given to its user by its own voice rather
    than by who the polls had as current (a wrong person is counted under each cause) -> that turn's
    voice scores, which its wrong-person example then shows."""
    voiced = {round(t, 2): dict(scores) for t, scores in (by_voice or {}).items()}
    right = wrong = wrong_voice = split = unmatched = 0
    wrong_examples: list[dict[str, Any]] = []
    covered: set[int] = set()
    for turn in written:
        overlaps = [_overlap(turn.start, turn.end, ln.start, ln.end) for ln in lines]
        best = max(range(len(lines)), key=overlaps.__getitem__, default=None)
        if best is None or overlaps[best] <= 0.0:
            unmatched += 1  # nothing was said then (an ASR hallucination on silence or noise)
            continue
        covered.add(best)
        person = lines[best].speaker
        if turn.user == own.get(person):
            right += 1
        elif owner.get(turn.user, person) != person:
            wrong += 1
            how = "voice" if round(turn.end, 2) in voiced else "polls"
            wrong_voice += how == "voice"
            if len(wrong_examples) < examples:
                example = {"at": round(turn.start, 1), "speaker": person, "written_to_person": owner[turn.user]}
                wrong_examples.append({**example, "how": how, **voiced.get(round(turn.end, 2), {})})
        else:
            split += 1
    n = right + wrong + split
    return {
        "written": n,
        "right": right,
        "wrong_person": wrong,
        "wrong_person_by_voice": wrong_voice,
        "split": split,
        "wrong_person_rate": wrong / n if n else None,
        "split_rate": split / n if n else None,
        "not_in_script": unmatched,
        "script_lines": len(lines),
        "unwritten_lines": len(lines) - len(covered),
        "wrong_person_examples": wrong_examples,
    }


def pool_turns(per_seed: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The counts summed over seeds, the rates recomputed from the sums."""
    keys = (
        "written",
        "right",
        "wrong_person",
        "wrong_person_by_voice",
        "split",
        "not_in_script",
        "script_lines",
        "unwritten_lines",
    )
    out: dict[str, Any] = {k: sum(int(r[k]) for r in per_seed) for k in keys}
    n = out["written"]
    out["wrong_person_rate"] = out["wrong_person"] / n if n else None
    out["split_rate"] = out["split"] / n if n else None
    return out
