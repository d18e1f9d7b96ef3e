"""The scorer of `bench serve`'s database crash (bench/_serve_fleet.py): did the fleet lose nothing?

A crash passes when every row committed before the kill (users, facts, episodes, identity keys, by
id) is there after crash recovery and at the end; every memory job of the phase is written (none
pending, running or failed at the end); every job the outage hit (an attempt that died with the
store, a hand-over that had to wait it out) was tried again and written; a memory round that failed
was followed by one that went through; every device's session finished; every worker is alive. `problems` names
each check that failed, so a result that only looks good (rows "lost: 0" with a row missing, a
failed job never completed) is counted wrong.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Set
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class CrashVerdict:
    ok: bool
    problems: list[str] = field(default_factory=list)


def missing_rows(before: Mapping[str, Set[Any]], after: Mapping[str, Set[Any]]) -> dict[str, int]:
    """Per table, how many ids counted before are not there after."""
    return {table: len(ids - after.get(table, set())) for table, ids in before.items()}


def judge_crash(
    *,
    before: Mapping[str, Set[Any]],
    after_recovery: Mapping[str, Set[Any]],
    at_end: Mapping[str, Set[Any]],
    jobs: Mapping[str, str],
    hit: Set[str],
    retried: Set[str],
    failures: Mapping[str, int],
    devices: int,
    sessions_completed: int,
    workers_alive: list[bool],
) -> CrashVerdict:
    """`before`/`after_recovery`/`at_end`: row ids per table; `jobs`: the phase's memory jobs, key ->
    status at the end; `hit` / `retried`: the keys of the jobs the outage hit and of those tried again,
    and `failures` the counts, over every device (the server's `done` events, `memory_failures`)."""
    problems: list[str] = []
    for when, after in (("after recovery", after_recovery), ("at the end", at_end)):
        lost = {t: n for t, n in missing_rows(before, after).items() if n}
        if lost:
            problems.append(f"committed rows missing {when}: {lost}")
    unwritten = sorted(k for k, status in jobs.items() if status != "done")
    if unwritten:
        statuses = ", ".join(f"{s} {n}" for s, n in sorted(Counter(jobs[k] for k in unwritten).items()))
        problems.append(f"{len(unwritten)} memory job(s) not written at the end ({statuses}): {unwritten[:5]}")
    never_again = sorted(hit - retried)
    if never_again:
        problems.append(f"{len(never_again)} job(s) the outage hit never tried again: {never_again[:5]}")
    hit_unwritten = sorted(k for k in hit if jobs.get(k) != "done")
    if hit_unwritten:
        problems.append(f"{len(hit_unwritten)} job(s) the outage hit not written: {hit_unwritten[:5]}")
    if failures.get("rounds_failed", 0) and not failures.get("rounds_recovered", 0):
        problems.append(f"{failures['rounds_failed']} memory round(s) failed and none went through afterwards")
    if sessions_completed < devices:
        problems.append(f"{devices - sessions_completed} of {devices} device session(s) never finished")
    if not workers_alive or not all(workers_alive):
        problems.append(f"workers alive: {workers_alive}")
    return CrashVerdict(not problems, problems)
