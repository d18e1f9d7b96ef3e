"""The memory update agent: decide ADD / UPDATE / DELETE / NOOP per extracted item, then apply.

Deciding (`plan`) reads the store and may call a slow model, so it runs outside any
write transaction; applying (`apply`) validates the whole plan first and then writes it
in one transaction, so a bad plan or a crash leaves memory as it was. Every decision,
NOOP included, lands in the operation history with its reason.

Evidence weights (M3-Agent's +1 / -1): a NOOP that names a current fact (the item says it
again) confirms it, support + 1 with this episode linked (once per fact per session); an
UPDATE or a DELETE is a contradiction, -1 on the old fact, which is closed as before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from egomem.llm.base import LLMError, LLMProvider
from egomem.memory.config import MemoryConfig
from egomem.memory.items import Candidate, Decision, ExtractedItem, KnownFact, UpdateInput, UpdatePlan
from egomem.memory.rules_update import change_wins
from egomem.privacy.sensitivity import decide
from egomem.schemas import Fact, FactKind, Provenance, Sensitivity
from egomem.store.base import MemoryStore

_KIND = {"fact": FactKind.FACT, "preference": FactKind.PREFERENCE, "summary": FactKind.SUMMARY}


class Encoder(Protocol):
    """What near-duplicate detection needs (egomem.retrieval.encoder.TextEncoder fits)."""

    def encode(self, texts: list[str]) -> np.ndarray: ...


@dataclass
class Applied:
    ops: list[tuple[str, str, str]] = field(default_factory=list)  # (op, fact id or "", text)

    def count(self, op: str) -> int:
        return sum(1 for o, _, _ in self.ops if o == op)


class MemoryUpdater:
    def __init__(self, store: MemoryStore, provider: LLMProvider, encoder: Encoder, config: MemoryConfig) -> None:
        self.store = store
        self.provider = provider
        self.encoder = encoder
        self.config = config

    def candidates(self, facts: list[Fact], items: list[ExtractedItem]) -> list[Candidate]:
        """Each item with its most similar current facts (summaries are compared with nothing)."""
        known = [f for f in facts if f.kind != FactKind.SUMMARY]
        out = [Candidate(index=i, item=it) for i, it in enumerate(items)]
        probe = [c for c in out if c.item.kind != "summary"]
        if not known or not probe:
            return out
        emb = self.encoder.encode([f.text for f in known] + [c.item.text for c in probe])
        sims = emb[len(known) :] @ emb[: len(known)].T
        k = self.config.similar_top_k
        for c, row in zip(probe, sims, strict=True):
            best = np.argsort(-row)[:k]
            c.similar = [KnownFact(id=known[j].id, kind=known[j].kind.value, text=known[j].text) for j in best]
            c.similarity = [round(float(row[j]), 4) for j in best]
        return out

    def plan(self, user_id: str | None, user_name: str | None, items: list[ExtractedItem]) -> UpdatePlan:
        """Ask the provider for decisions on the fact-like items (names and relations are
        linked by graph code, not decided). Raises LLMError; writes nothing."""
        facts = self.store.list_facts(user_id) if user_id else []
        fact_items = [it for it in items if it.kind in _KIND]
        inp = UpdateInput(
            user_name=user_name,
            facts=[KnownFact(id=f.id, kind=f.kind.value, text=f.text) for f in facts if f.kind != FactKind.SUMMARY],
            candidates=self.candidates(facts, fact_items),
            duplicate_cosine=self.config.duplicate_cosine,
        )
        # A small model copies "f2" far more reliably than "f_3c9e41d0..." (seen: the 1.5B
        # model answered with targets shaped like f1): the task sees short aliases, the plan
        # is translated back before it is checked.
        aliased, real_of = _aliased(inp)
        plan = self.provider.run("update", aliased, UpdatePlan)
        back = [d.model_copy(update={"target": real_of.get(d.target, d.target)}) for d in plan.decisions]
        plan = plan.model_copy(update={"decisions": back})
        return _checked(plan, inp, {f.id for f in facts})

    def apply(
        self,
        user_id: str,
        items: list[ExtractedItem],
        plan: UpdatePlan,
        *,
        episode_id: str,
        at: float,
        cause: str,
        origin: Callable[[str], Provenance] | None = None,
        private: bool = False,
    ) -> Applied:
        """Write the plan for `user_id` (call inside the caller's transaction); `origin` gives a new
        fact's provenance (turns, identity decision) from its source utterance. Each new fact gets its
        sensitivity here (egomem.privacy.sensitivity.decide); `private`: the person asked to keep the
        session between us. An update keeps the sensitivity of the fact it replaces when stricter."""
        fact_items = [it for it in items if it.kind in _KIND]
        done = Applied()
        closed: set[str] = set()
        confirmed: set[str] = set()
        for d in plan.decisions:
            item = fact_items[d.index]
            text = (d.text or item.text).strip()
            why = f"{cause}: {d.reason}" if d.reason else cause
            if d.op in ("UPDATE", "DELETE") and d.target in closed:
                d = Decision(index=d.index, op="NOOP", target=d.target, reason="target already replaced this session")
            new = Fact(
                user_id=user_id,
                kind=_KIND[item.kind],
                text=text,
                source_episode=episode_id,
                source_text=item.source_text,
                importance=item.importance,
                valid_from=at,
                sensitivity=decide(text, item.source_text, private_session=private),
                **(origin(item.source_text).model_dump() if origin else {}),
            )
            if d.op == "UPDATE" and d.target and new.sensitivity == Sensitivity.NONE:
                new = new.model_copy(update={"sensitivity": self.store.get_fact(d.target).sensitivity})
            if d.op == "ADD":
                self.store.add_fact(new, cause=why)
                done.ops.append(("ADD", new.id, text))
            elif d.op == "UPDATE" and d.target:
                self.store.supersede_fact(d.target, new, at=at, cause=why, contradicted=True)
                closed.add(d.target)
                done.ops.append(("UPDATE", new.id, text))
            elif d.op == "DELETE" and d.target:
                self.store.close_fact(
                    d.target, at=at, cause=why, contradicted=True, episode_id=episode_id, source_text=item.source_text
                )
                closed.add(d.target)
                done.ops.append(("DELETE", d.target, item.text))
            elif d.op == "NOOP" and self._confirms(d, item, episode_id, closed | confirmed):
                # The item says a current fact again in a new episode: repeated evidence strengthens it.
                assert d.target is not None
                self.store.confirm_fact(
                    d.target, episode_id=episode_id, at=at, source_text=item.source_text, cause=f"{why}: confirmed"
                )
                confirmed.add(d.target)
                done.ops.append(("NOOP", d.target, item.text))
            else:
                detail = {"item": item.text, "source_text": item.source_text, "episode": episode_id}
                self.store.log_noop("fact", d.target or f"item:{d.index}", user_id, detail, why)
                done.ops.append(("NOOP", d.target or "", item.text))
        return done

    def _confirms(self, d: Decision, item: ExtractedItem, episode_id: str, skip: set[str]) -> bool:
        """Whether a NOOP is a confirmation: it names a current fact this episode has not supported yet."""
        if not d.target or d.target in skip or item.retract:
            return False
        return episode_id not in {e.episode_id for e in self.store.fact_evidence(d.target)}


def _checked(plan: UpdatePlan, inp: UpdateInput, fact_ids: set[str]) -> UpdatePlan:
    """One decision per candidate, targets that exist: otherwise the plan is refused whole."""
    n = len(inp.candidates)
    by_index: dict[int, Decision] = {}
    for d in plan.decisions:
        if not 0 <= d.index < n:
            raise LLMError("invalid update plan", f"decision for unknown item {d.index}")
        if d.op in ("UPDATE", "DELETE") and d.target not in fact_ids:
            raise LLMError("invalid update plan", f"{d.op} of unknown fact {d.target!r}")
        if d.op == "NOOP" and d.target is not None and d.target not in fact_ids:
            d = Decision(index=d.index, op="NOOP", reason=d.reason)
        by_index.setdefault(d.index, d)
    for i in range(n):
        # An item the model skipped is not silently dropped: it is a logged NOOP.
        by_index.setdefault(i, Decision(index=i, op="NOOP", reason="no decision returned"))
    # A model may retract and update one fact in one plan too; the update must be the one applied.
    return UpdatePlan(decisions=change_wins([by_index[i] for i in range(n)]))


def _aliased(inp: UpdateInput) -> tuple[UpdateInput, dict[str | None, str]]:
    """`inp` with every fact id replaced by f1, f2, ... and the map back to the real ids."""
    alias: dict[str, str] = {}
    for f in [*inp.facts, *(k for c in inp.candidates for k in c.similar)]:
        alias.setdefault(f.id, f"f{len(alias) + 1}")

    def short(f: KnownFact) -> KnownFact:
        return f.model_copy(update={"id": alias[f.id]})

    out = inp.model_copy(
        update={
            "facts": [short(f) for f in inp.facts],
            "candidates": [c.model_copy(update={"similar": [short(k) for k in c.similar]}) for c in inp.candidates],
        }
    )
    return out, {a: real for real, a in alias.items()}
