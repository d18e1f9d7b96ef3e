"""Scoring who the Level-1 MemChunk named during each visit of a scripted stream.

A visit is a person in front of the camera from `start` to `end`. The Level-1 user is a
step function of time, set by each Level-1 MemChunk event (`switches`). Every visit is
mapped to the user that held Level 1 for most of it. A user belongs to one person at most:
the person whose visits it holds most (its majority person); each person's "own" user is, of
the users that belong to them, the one holding most of their visits (none: every answer for
that person is wrong). From that:

- purity: of the visits mapped to a user, the share belonging to that user's majority
  person (1.0: no user ever stands for two people);
- fragmentation: distinct users per person, averaged over people (1.0: nobody was split);
- wrong switches: Level-1 switches, inside a visit, to a user other than the visitor's own
  (a user that stands for another person too is that person's, so it is wrong for this one);
- correct-user latency: visit start -> Level 1 holds the visitor's own user (0 when it
  already did). A visit where that never happens is missed and counts with the whole visit's
  length (a lower bound of its latency), never dropped from the percentiles; the missed
  visits are counted too.

The times are whatever axis the caller gives (stream seconds for a lockstep replay, wall
seconds for a live one), the same for visits and switches.

Placeholder users (named people not met) are never a Level-1 user in practice; any that
shows up is ignored, and they are not counted as users.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Visit:
    start: float
    end: float
    person: str


def holder_durations(visit: Visit, switches: list[tuple[float, str | None]]) -> dict[str, float]:
    """Seconds of the visit during which each user held Level 1 (None excluded)."""
    held: dict[str, float] = defaultdict(float)
    current: str | None = None
    t = visit.start
    for at, user in sorted(switches, key=lambda s: s[0]):
        if at <= visit.start:
            current = user
            continue
        if at >= visit.end:
            break
        if current is not None:
            held[current] += at - t
        current, t = user, at
    if current is not None:
        held[current] += visit.end - t
    return dict(held)


def score_visits(
    visits: list[Visit], switches: list[tuple[float, str | None]], placeholders: Collection[str] = ()
) -> dict[str, Any]:
    switches = [(t, None if u in placeholders else u) for t, u in switches]
    mapped: list[str | None] = []
    for v in visits:
        held = holder_durations(v, switches)
        mapped.append(max(held, key=lambda u: held[u]) if held else None)
    by_person: dict[str, Counter[str]] = defaultdict(Counter)
    by_user: dict[str, Counter[str]] = defaultdict(Counter)
    for v, u in zip(visits, mapped, strict=True):
        if u is not None:
            by_person[v.person][u] += 1
            by_user[u][v.person] += 1
    # A user is its majority person's (ties: the person seen first); a person's own user is the one
    # of theirs holding most of their visits.
    owner = {u: max(c, key=lambda p: c[p]) for u, c in by_user.items()}
    own = {}
    for p, c in by_person.items():
        theirs = [(n, u) for u, n in c.most_common() if owner[u] == p]
        if theirs:
            own[p] = theirs[0][1]
    assigned = sum(sum(c.values()) for c in by_user.values())
    purity = sum(max(c.values()) for c in by_user.values()) / assigned if assigned else None
    people = {v.person for v in visits}
    fragmentation = float(np.mean([len(by_person[p]) for p in people if by_person[p]])) if by_person else None
    wrong, missed, latencies = 0, 0, []
    for v in visits:
        mine = own.get(v.person)
        inside = [(t, u) for t, u in switches if v.start <= t < v.end]
        wrong += sum(1 for _, u in inside if u is not None and u != mine)
        before = [u for t, u in switches if t < v.start]
        if mine is not None and before and before[-1] == mine:
            latencies.append(0.0)
            continue
        hit = next((t for t, u in inside if u == mine and mine is not None), None)
        if hit is not None:
            latencies.append(hit - v.start)
        else:
            missed += 1
            latencies.append(v.end - v.start)
    return {
        "identity": {
            "purity": purity,
            "fragmentation": fragmentation,
            "wrong_switches": wrong,
            "people": len(people),
            "users_holding_visits": len(by_user),
            "visits_without_user": sum(u is None for u in mapped),
        },
        "level1_correct_latency_s_p50": float(np.median(latencies)) if latencies else None,
        "level1_correct_latency_s_p95": float(np.percentile(latencies, 95)) if latencies else None,
        "level1_missed_visits": missed,
        "latencies": latencies,
        # Who is whose (for the turn scorer, bench/_turns.py): person -> own user, user -> its person.
        "own": own,
        "owner": owner,
    }


def pool(per_seed: dict[str, dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Pooled figures over seeds (latencies pooled, identity figures averaged, wrong
    switches summed) and the spread (min, max) of each per-seed figure."""
    runs = list(per_seed.values())
    lat = [x for r in runs for x in r["latencies"]]

    def mean(key: str) -> float | None:
        vals = [r["identity"][key] for r in runs if r["identity"][key] is not None]
        return float(np.mean(vals)) if vals else None

    pooled = {
        "identity": {
            "purity": mean("purity"),
            "fragmentation": mean("fragmentation"),
            "wrong_switches": sum(r["identity"]["wrong_switches"] for r in runs),
        },
        "level1_correct_latency_s_p50": float(np.median(lat)) if lat else None,
        "level1_correct_latency_s_p95": float(np.percentile(lat, 95)) if lat else None,
        "level1_missed_visits": sum(r["level1_missed_visits"] for r in runs),
        "rtf_overall": float(np.mean([r["rtf_overall"] for r in runs])) if runs else None,
    }
    spread: dict[str, Any] = {}
    for key in ("purity", "fragmentation", "wrong_switches"):
        vals = [r["identity"][key] for r in runs if r["identity"][key] is not None]
        spread[f"identity.{key}"] = [min(vals), max(vals)] if vals else None
    for key in ("level1_correct_latency_s_p50", "level1_correct_latency_s_p95", "rtf_overall"):
        vals = [r[key] for r in runs if r[key] is not None]
        spread[key] = [min(vals), max(vals)] if vals else None
    return pooled, spread
