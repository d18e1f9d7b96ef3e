"""Per-entity memory operations over one shared Database (and so one shared transaction).

Each module owns one kind of row: users, identity keys, facts, relations, episodes,
evidence links, history, memory jobs (the memory-writing queue); purge.py (deleting a
person) and repair.py (merging and splitting people, undoably, through the row record of
changes.py) cut across all of them. Every mutating operation runs in `db.transaction()` and
writes its history row through HistoryOps inside it, so memory and its log commit or roll
back together; a caller's own `store.transaction()` joins them into one.
"""

from __future__ import annotations

from egomem.store.ops.episodes import EpisodeOps
from egomem.store.ops.evidence import EvidenceOps
from egomem.store.ops.facts import FactOps
from egomem.store.ops.history import HistoryOps
from egomem.store.ops.jobs import JobOps
from egomem.store.ops.keys import KeyOps
from egomem.store.ops.relations import RelationOps
from egomem.store.ops.repair import RepairOps
from egomem.store.ops.users import UserOps

__all__ = [
    "EpisodeOps",
    "EvidenceOps",
    "FactOps",
    "HistoryOps",
    "JobOps",
    "KeyOps",
    "RelationOps",
    "RepairOps",
    "UserOps",
]
