"""Consolidation, M <- update(M), run periodically per user.

1. Merge duplicate current facts (same kind, MiniLM cosine >= duplicate_cosine): the
   older fact survives with the use counts of both and the higher importance (a new row
   superseding it); the other is closed into it. Both stay in history.
2. Fold dialog summaries older than the `keep_recent_summaries` newest into one running
   summary (extractive: the first sentence of each, oldest first, within a word budget).
3. Retention: only when `retention_min_strength` is set, purge current facts whose memory
   strength fell below it. Without that policy nothing is ever removed by decay.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from egomem.memory.config import MemoryConfig
from egomem.memory.strength import strength
from egomem.memory.updater import Encoder
from egomem.schemas import Fact, FactKind
from egomem.store.base import MemoryStore

RUNNING_PREFIX = "Earlier sessions: "


@dataclass
class ConsolidationReport:
    merged: int = 0
    summaries_folded: int = 0
    purged: int = 0


def consolidate(
    store: MemoryStore, user_id: str, encoder: Encoder, config: MemoryConfig, *, now: float
) -> ConsolidationReport:
    report = ConsolidationReport()
    with store.transaction():
        report.merged = _merge_duplicates(store, user_id, encoder, config, now)
        report.summaries_folded = _fold_summaries(store, user_id, config, now)
        if config.retention_min_strength is not None:
            report.purged = _retain(store, user_id, config, now)
    return report


def consolidate_all(
    store: MemoryStore, encoder: Encoder, config: MemoryConfig, *, now: float
) -> dict[str, ConsolidationReport]:
    """One periodic pass over every real user (placeholders hold only what others said)."""
    return {
        u.id: consolidate(store, u.id, encoder, config, now=now) for u in store.list_users(include_placeholders=False)
    }


def _merge_duplicates(store: MemoryStore, user_id: str, encoder: Encoder, config: MemoryConfig, now: float) -> int:
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
            )
            texts = "; ".join(f.text for f in group[1:])
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


def _fold_summaries(store: MemoryStore, user_id: str, config: MemoryConfig, now: float) -> int:
    summaries = store.list_facts(user_id, kinds=[FactKind.SUMMARY])
    running = [s for s in summaries if s.text.startswith(RUNNING_PREFIX)]
    dated = [s for s in summaries if not s.text.startswith(RUNNING_PREFIX)]
    old = dated[: max(0, len(dated) - config.keep_recent_summaries)]
    if not old:
        return 0
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


def _retain(store: MemoryStore, user_id: str, config: MemoryConfig, now: float) -> int:
    floor = float(config.retention_min_strength or 0.0)
    keep_summaries = {
        s.id for s in store.list_facts(user_id, kinds=[FactKind.SUMMARY])[-config.keep_recent_summaries :]
    }
    purged = 0
    for f in store.list_facts(user_id):
        s = strength(f, now, base_days=config.stability_days)
        if f.id not in keep_summaries and s < floor:
            store.delete_fact(f.id, cause=f"retention policy: strength {s:.3f} < {floor}")
            purged += 1
    return purged
