"""Scoring one world of `bench identity` from what the product did during each visit.

A visit's user is the user memory wrote the visit's session to (the episode's participant after
every repair the product made; `VisitRecord.user`). Each user stands for the person holding most
of its visits (its majority person). From that, per world:

- merges: persons folded into a user that already stands for another person (a user holding the
  visits of k persons counts k - 1); `merged_pairs` lists (person, person) per merged user;
- splits: persons whose visits went to two or more users (rate over persons);
- misattributed facts: current facts (not on placeholders) learnt from a visit of person P and
  stored on a user whose majority person is not P (a user holding no visit counts as wrong);
- asks: the assistant's lines asking the user's name (`ASK_RE`), per person-day;
- day-2 greeting: for each person who said their name on day 1 and comes on day 2, the lines the
  assistant said unprompted (Level-1 greetings) in their first day-2 visit: right when they name
  the person and no other person of the world, wrong when they name someone else, else none;
  the same over the first visit of every later day (`later_days`);
- never-named greeted: visits of persons who never said their name in which an unprompted line
  names someone (any name there is a wrong one);
- decision latency: polls from the visit's start until Level 1 holds the visit's user (visits where
  it never does are `never_decided`);
- visits unwritten: visits whose session memory wrote to nobody (held while identity was unsure,
  then dropped because nothing settled who it was).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

ASK_RE = re.compile(r"\bwhat(?:'s| is) your name\b", re.I)


@dataclass
class VisitRecord:
    person: str
    day: int
    first_of_day: bool
    says_name: bool
    user: str | None  # the user memory wrote the visit to (None: nothing written)
    level1: list[str | None] = field(default_factory=list)  # Level-1 user after each poll of the visit
    proactive: list[str] = field(default_factory=list)  # what the assistant said unprompted
    replies: list[str] = field(default_factory=list)  # its answers to the person's lines


@dataclass
class FactRecord:
    owner: str  # user the fact is stored on
    source_person: str | None  # person whose visit the fact was learnt from (None: unknown)
    text: str = ""


def _names_in(lines: list[str], names: dict[str, str]) -> set[str]:
    """Persons whose name is said in `lines` (whole words)."""
    text = " ".join(lines)
    return {p for p, n in names.items() if re.search(rf"\b{re.escape(n)}\b", text)}


def score_world(names: dict[str, str], visits: list[VisitRecord], facts: list[FactRecord]) -> dict[str, Any]:
    """`names`: person -> their true name. Counts (summable over worlds) and details."""
    by_user: dict[str, Counter[str]] = defaultdict(Counter)
    by_person: dict[str, set[str]] = defaultdict(set)
    for v in visits:
        if v.user is not None:
            by_user[v.user][v.person] += 1
            by_person[v.person].add(v.user)
    majority = {u: c.most_common(1)[0][0] for u, c in by_user.items()}
    merged = {u: sorted(c) for u, c in by_user.items() if len(c) > 1}
    people = sorted(names)
    split_people = [p for p in people if len(by_person[p]) > 1]
    wrong_facts = [f for f in facts if f.source_person is not None and majority.get(f.owner) != f.source_person]
    person_days = len({(v.person, v.day) for v in visits})
    asks = sum(1 for v in visits for line in (*v.proactive, *v.replies) if ASK_RE.search(line))
    named_day1 = {v.person for v in visits if v.day == 1 and v.says_name}
    never_named = set(people) - {v.person for v in visits if v.says_name}
    greet: dict[str, Counter[str]] = {"day2": Counter(), "later_days": Counter()}
    missed: list[dict[str, Any]] = []  # greetings not by the right name, for reading
    for v in visits:
        if v.day < 2 or not v.first_of_day or v.person not in named_day1:
            continue
        said = _names_in(v.proactive, names)
        outcome = "wrong" if said - {v.person} else "right" if v.person in said else "none"
        for key in ("day2", "later_days") if v.day == 2 else ("later_days",):
            greet[key][outcome] += 1
        if outcome != "right":
            missed.append({"person": names[v.person], "day": v.day, "outcome": outcome, "said": v.proactive})
    never_named_greeted = sum(1 for v in visits if v.person in never_named and _names_in(v.proactive, names))
    latencies: list[int] = []
    for v in visits:
        hit = next((i + 1 for i, u in enumerate(v.level1) if u is not None and u == v.user), None)
        if hit is not None:
            latencies.append(hit)
    return {
        "people": len(people),
        "person_days": person_days,
        "visits": len(visits),
        "users": len(by_user),
        "merges": sum(len(c) - 1 for c in by_user.values()),
        "merged_users": len(merged),
        "merged_pairs": [[names[p] for p in ps] for ps in merged.values()],
        "split_people": len(split_people),
        "facts": sum(1 for f in facts if f.source_person is not None),
        "facts_unknown_source": sum(1 for f in facts if f.source_person is None),
        "misattributed_facts": len(wrong_facts),
        "misattributed": [{"text": f.text, "from": names[f.source_person or ""]} for f in wrong_facts][:10],
        "asks": asks,
        "day2_eligible": sum(greet["day2"].values()),
        "day2_right": greet["day2"]["right"],
        "day2_wrong": greet["day2"]["wrong"],
        "later_days_eligible": sum(greet["later_days"].values()),
        "later_days_right": greet["later_days"]["right"],
        "later_days_wrong": greet["later_days"]["wrong"],
        "greetings_not_right": missed,
        "never_named_people": len(never_named),
        "never_named_greeted": never_named_greeted,
        "latencies_polls": latencies,
        "never_decided": len(visits) - len(latencies),
        # Visits whose session memory wrote to nobody: held while identity was unsure, never settled.
        "visits_unwritten": sum(1 for v in visits if v.user is None),
    }


COUNTS = (
    "people",
    "person_days",
    "visits",
    "users",
    "merges",
    "merged_users",
    "split_people",
    "facts",
    "facts_unknown_source",
    "misattributed_facts",
    "asks",
    "day2_eligible",
    "day2_right",
    "day2_wrong",
    "later_days_eligible",
    "later_days_right",
    "later_days_wrong",
    "never_named_people",
    "never_named_greeted",
    "never_decided",
    "visits_unwritten",
)


def pool_worlds(worlds: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts summed over worlds, and the rates the targets are stated in."""
    import numpy as np

    tot = {k: sum(int(w[k]) for w in worlds) for k in COUNTS}
    lat = [x for w in worlds for x in w["latencies_polls"]]

    def rate(a: str, b: str) -> float | None:
        return tot[a] / tot[b] if tot[b] else None

    return {
        **tot,
        "worlds": len(worlds),
        "worlds_with_merges": sum(1 for w in worlds if w["merges"]),
        "split_rate": rate("split_people", "people"),
        "misattributed_fact_rate": rate("misattributed_facts", "facts"),
        "asks_per_person_day": rate("asks", "person_days"),
        "day2_right_rate": rate("day2_right", "day2_eligible"),
        "later_days_right_rate": rate("later_days_right", "later_days_eligible"),
        "latency_polls_p50": float(np.median(lat)) if lat else None,
        "latency_polls_p95": float(np.percentile(lat, 95)) if lat else None,
        "latency_polls_max": max(lat) if lat else None,
    }
