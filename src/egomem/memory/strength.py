"""Memory strength: how alive a memory item is, for ranking and retention.

A forgetting curve in the manner of MemoryBank (Zhong et al., 2023, after Ebbinghaus):
retention R = exp(-t / S), where t is the time since the item was last used (or
created) and S its stability. MemoryBank adds 1 to S on every recall; here S grows
with each use and with the item's importance, so a used or important memory fades
slower. Retrieval ranks with `strength` and reinforces what it returned with
`store.mark_facts_used(ids, at)` (use_count + 1, last_used = at), which resets t.
Repeated evidence counts like a recall: each later episode that confirmed the fact
(`support` - 1, see store/ops/facts.py) adds to S as a use does.
"""

from __future__ import annotations

import math

from egomem.schemas import Fact

DAY_S = 86_400.0


def confirmations(fact: Fact) -> int:
    """Later episodes that said the fact again (its support beyond the first evidence)."""
    return max(fact.support - 1, 0)


def stability_days(fact: Fact, base_days: float = 7.0) -> float:
    """Days for retention to fall to 1/e: base x (1 + uses + confirmations) x (0.5 + importance)."""
    return base_days * (1.0 + max(fact.use_count, 0) + confirmations(fact)) * (0.5 + fact.importance)


def strength(fact: Fact, now: float, *, base_days: float = 7.0) -> float:
    """Retention in (0, 1]; 0 for a superseded or closed fact (it is history, not memory)."""
    if fact.valid_to is not None:
        return 0.0
    last = fact.last_used if fact.last_used is not None else fact.valid_from
    elapsed_days = max(0.0, now - last) / DAY_S
    return math.exp(-elapsed_days / stability_days(fact, base_days))
