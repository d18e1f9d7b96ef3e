"""One scenario run written out for reading by hand: what was said, the gold, and what memory holds."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from egomem.bench.convo.score import Observation, Tally
from egomem_eval.convo.scenario import Scenario


def write_dump(path: Path, sc: Scenario, obs: Observation, memory: list[dict[str, Any]], tally: Tally) -> None:
    data = {
        "sessions": [{"day": s.day, "person": s.person, "turns": [u.text for u in s.turns]} for s in sc.sessions],
        "gold": {
            "facts": [asdict(f) for f in sc.facts],
            "relations": [{**asdict(r), "words": sorted(r.words)} for r in sc.relations],
            "changes": [asdict(c) for c in sc.changes],
            "level2": [asdict(q) for q in sc.level2],
        },
        "person_users": {p: sorted(u) for p, u in obs.person_users.items()},
        "greetings": obs.greetings,
        "answers": obs.answers,
        "cpu_s": obs.cpu_s,
        "memory": memory,
        "counts": tally.counts,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
