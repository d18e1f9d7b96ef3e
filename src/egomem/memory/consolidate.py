"""Consolidation, M <- update(M), run periodically per user.

1. Merge duplicate current facts (same kind, MiniLM cosine >= duplicate_cosine): the
   older fact survives with the use counts of both and the higher importance (a new row
   superseding it); the other is closed into it. Both stay in history.
2. Fold dialog summaries older than the `keep_recent_summaries` newest into one running
   summary (extractive: the first sentence of each, oldest first, within a word budget).
3. Retention: only when `retention_min_strength` is set, purge current facts whose memory
   strength fell below it (never the `keep_recent_summaries` newest summaries nor the running
   summary, which holds the older ones). Without that policy nothing is ever removed by decay.

One person's pass is one transaction: interrupted (an error, a crash, a lost connection), it
leaves that person's memory as it was. It holds that person's consolidation lock, so two workers
of a fleet never consolidate one person at once (the second skips them). A dry run does the same
work and rolls it back, so its report is exactly what a real pass would do. The product runs this
as sleep-time work (memory/sleep_time.py) and `egomem consolidate` runs it by hand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from egomem.errors import StoreError
from egomem.memory.config import MemoryConfig
from egomem.memory.strength import strength
from egomem.memory.updater import Encoder
from egomem.schemas import Fact, FactKind, Sensitivity
from egomem.store.base import MemoryStore

RUNNING_PREFIX = "Earlier sessions: "


@dataclass
class ConsolidationReport:
    merged: int = 0
    summaries_folded: int = 0
    purged: int = 0
    # What was done, for a dry run's report and the log: merged texts, folded summaries, faded
    # facts with the strength that put them under the retention floor.
    merges: list[str] = field(default_factory=list)
    folded: list[str] = field(default_factory=list)
    faded: list[tuple[str, float]] = field(default_factory=list)
    skipped: bool = False  # another worker held this person's consolidation lock

    @property
    def changed(self) -> bool:
        return bool(self.merged or self.summaries_folded or self.purged)


class _RollBack(Exception):
    """Raised inside a dry run's transaction so that nothing it did is kept."""


def consolidate(
    store: MemoryStore, user_id: str, encoder: Encoder, config: MemoryConfig, *, now: float, dry_run: bool = False
) -> ConsolidationReport:
    if dry_run and store.db.in_transaction:
        # Rolling back would take the caller's transaction with it.
        raise StoreError("a dry run of consolidation cannot join an open transaction")
    report = ConsolidationReport()
    try:
        with store.transaction():
            if not store.try_lock(f"consolidate:{user_id}"):
                # Another worker of the fleet is consolidating this person right now: theirs stands.
                report.skipped = True
                return report
            report.merged = _merge_duplicates(store, user_id, encoder, config, now, report.merges)
            report.summaries_folded = _fold_summaries(store, user_id, config, now, report.folded)
            if config.retention_min_strength is not None:
                report.purged = _retain(store, user_id, config, now, report.faded)
            if dry_run:
                raise _RollBack
    except _RollBack:
        pass
    return report


def consolidate_all(
    store: MemoryStore, encoder: Encoder, config: MemoryConfig, *, now: float, dry_run: bool = False
) -> dict[str, ConsolidationReport]:
    """One periodic pass over every real user (placeholders hold only what others said)."""
    return {
        u.id: consolidate(store, u.id, encoder, config, now=now, dry_run=dry_run)
        for u in store.list_users(include_placeholders=False)
    }


def _merge_duplicates(
    store: MemoryStore, user_id: str, encoder: Encoder, config: MemoryConfig, now: float, done: list[str]
) -> int:
    merged = 0
    for kind in (FactKind.FACT, FactKind.PREFERENCE, FactKind.PERSONA):
        facts = store.list_facts(user_id, kinds=[kind])
        if len(facts) < 2:
            continue
        emb = encoder.encode([f.text for f in facts])
        sims = emb @ emb.T
        gone: set[int] = set()
        for i in range(len(facts)):  # oldest first (list_facts orders by valid_from)
            if i in gone:
                continue
            dups = [j for j in range(i + 1, len(facts)) if j not in gone and sims[i, j] >= config.duplicate_cosine]
            if not dups:
                continue
            keep = facts[i]
            group = [keep, *(facts[j] for j in dups)]
            survivor = Fact(
                user_id=user_id,
                kind=kind,
                text=keep.text,
                confidence=max(f.confidence for f in group),
                source_episode=keep.source_episode,
                source_text=keep.source_text,
                # The survivor is the oldest statement again: its provenance goes with it (a split moves it by that).
                source_turns=keep.source_turns,
                identity_status=keep.identity_status,
                identity_llr=keep.identity_llr,
                valid_from=keep.valid_from,
                importance=max(f.importance for f in group),
                use_count=sum(f.use_count for f in group),
                last_used=max((f.last_used for f in group if f.last_used is not None), default=None),
                # The merged fact is as private as the most private of the facts it merges.
                sensitivity=next((f.sensitivity for f in group if f.sensitivity != Sensitivity.NONE), Sensitivity.NONE),
            )
            texts = "; ".join(f.text for f in group[1:])
            done.append(f"{keep.text!r} <- {texts}")
            # The survivor holds the group's evidence: its support is the sum of theirs.
            store.supersede_fact(
                keep.id,
                survivor,
                at=now,
                cause=f"consolidate: merged duplicates ({texts})",
                evidence_from=[f.id for f in group],
            )
            for j in dups:
                cos = float(sims[i, j])
                store.close_fact(
                    facts[j].id, at=now, superseded_by=survivor.id, cause=f"consolidate: duplicate (cosine {cos:.2f})"
                )
                gone.add(j)
                merged += 1
    return merged


def _first_sentence(text: str) -> str:
    text = text.removeprefix(RUNNING_PREFIX)
    parts = re.split(r"(?<=[.!?])\s+", text.strip())
    # A rule summary's first sentence only dates the session; take the one with content too.
    head = " ".join(parts[:2]) if len(parts) > 1 and len(parts[0].split()) < 10 else parts[0]
    return head


def _fold_summaries(store: MemoryStore, user_id: str, config: MemoryConfig, now: float, done: list[str]) -> int:
    summaries = store.list_facts(user_id, kinds=[FactKind.SUMMARY])
    running = [s for s in summaries if s.text.startswith(RUNNING_PREFIX)]
    dated = [s for s in summaries if not s.text.startswith(RUNNING_PREFIX)]
    old = dated[: max(0, len(dated) - config.keep_recent_summaries)]
    if not old:
        return 0
    done.extend(s.text for s in old)
    pieces = [r.text.removeprefix(RUNNING_PREFIX) for r in running] + [_first_sentence(s.text) for s in old]
    words = " ".join(pieces).split()
    # Over budget, the oldest words go first: the running summary keeps the recent past.
    text = RUNNING_PREFIX + " ".join(words[-config.running_summary_max_words :])
    new = Fact(
        user_id=user_id,
        kind=FactKind.SUMMARY,
        text=text,
        source_episode=old[-1].source_episode,
        source_text="; ".join(s.id for s in old),  # provenance: the summaries it was folded from
        valid_from=old[0].valid_from,
        importance=0.3,
    )
    if running:
        store.supersede_fact(running[0].id, new, at=now, cause="consolidate: running summary extended")
        for extra in running[1:]:
            store.close_fact(extra.id, at=now, superseded_by=new.id, cause="consolidate: running summary")
    else:
        store.add_fact(new, cause="consolidate: running summary")
    for s in old:
        store.close_fact(s.id, at=now, superseded_by=new.id, cause="consolidate: folded into running summary")
    return len(old)


def _retain(store: MemoryStore, user_id: str, config: MemoryConfig, now: float, done: list[tuple[str, float]]) -> int:
    floor = float(config.retention_min_strength or 0.0)
    summaries = store.list_facts(user_id, kinds=[FactKind.SUMMARY])
    dated = [s for s in summaries if not s.text.startswith(RUNNING_PREFIX)]
    # The recent summaries and the running summary (what the older ones were folded into) stay.
    keep_summaries = {s.id for s in dated[-config.keep_recent_summaries :]}
    keep_summaries |= {s.id for s in summaries if s.text.startswith(RUNNING_PREFIX)}
    purged = 0
    for f in store.list_facts(user_id):
        s = strength(f, now, base_days=config.stability_days)
        if f.id not in keep_summaries and s < floor:
            store.delete_fact(f.id, cause=f"retention policy: strength {s:.3f} < {floor}")
            done.append((f.text, s))
            purged += 1
    return purged
