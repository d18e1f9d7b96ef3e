"""The memory store M: per-entity operations on one database, behind one facade.

`store.users`, `store.keys`, `store.facts`, `store.relations`, `store.episodes`,
`store.evidence` (which episodes support or contradict a fact or relation),
`store.repairs` (merging and splitting people, undoably), `store.jobs` (the memory-writing
queue: sessions waiting for extraction) and `store.log` (history) are
the operations (store/ops/), all on the same Database, so any of them can join one
`store.transaction()`. The flat methods (`create_user`, `add_fact`,
...) are the same operations under their long-standing names, delegating one to one.
Every mutating operation writes its own history row in the same transaction, so the
operation log can never disagree with the data. Operations raise NotFoundError for
unknown ids and DimensionError for vectors that do not fit their encoder.

`store.capabilities` says what the database can do; callers branch on it, never on the
store's class. Drivers (sqlite.py, postgres.py) only open the database and its keyring and call
`_open`: migrate, check the master key, seal any plaintext identity key, in one transaction.
Identity keys are sealed at rest under each person's data key (store/crypto.py, keyring.py);
purging a person destroys their data key and then `scrub`s what the database keeps of deleted rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np
import sqlalchemy as sa

from egomem.errors import StoreError
from egomem.schemas import (
    ConsentEvent,
    DeletionReport,
    Episode,
    Evidence,
    Fact,
    FactKind,
    HistoryEntry,
    IdentityKey,
    Modality,
    Relation,
    Repair,
    Sensitivity,
    User,
)
from egomem.store import migrations
from egomem.store.capabilities import StoreCapabilities
from egomem.store.db import Database
from egomem.store.keyring import Keyring
from egomem.store.ops import (
    EpisodeOps,
    EvidenceOps,
    FactOps,
    HistoryOps,
    JobOps,
    KeyOps,
    RelationOps,
    RepairOps,
    UserOps,
)
from egomem.store.ops.consent import ConsentOps
from egomem.store.ops.jobs import REFINE_SUFFIX as REFINE_SUFFIX  # the job key convention, for the queue
from egomem.store.ops.jobs import JobKind, MemoryJob, QueueStats
from egomem.store.schema import identity_keys, metadata
from egomem.store.vectors import KeyMatch, nearest_keys

_ANY_UNSEALED = sa.select(identity_keys.c.id).where(identity_keys.c.sealed == 0).limit(1)


class MemoryStore:
    """Persistent memory of people: identities, profiles, social graph, episodes."""

    def __init__(self, db: Database, capabilities: StoreCapabilities, keyring: Keyring) -> None:
        self.db = db
        self.capabilities = capabilities
        self.keyring = keyring
        self.log = HistoryOps(db)
        self.users = UserOps(db, self.log, keyring)
        self.keys = KeyOps(db, self.log, self.users, capabilities, keyring)
        self.evidence = EvidenceOps(db)
        self.facts = FactOps(db, self.log, self.users, self.evidence)
        self.relations = RelationOps(db, self.log, self.users, self.evidence)
        self.episodes = EpisodeOps(db, self.log, self.users)
        self.repairs = RepairOps(db, self.log, self.users)
        self.consent = ConsentOps(db, self.users)
        self.jobs = JobOps(db)  # the memory-writing queue (memory/jobs.py)

    # -- lifecycle -------------------------------------------------------------
    def _open(self) -> None:
        """Migrate, check the master key (MasterKeyError before anything is read), and seal every
        plaintext identity key, all in one transaction: a wrong key leaves the database as it was.
        A SQLite store with nothing to do is only read (processes that open it while another writes
        in a loop need not wait for the write lock)."""
        sqlite_current = self.db.dialect == "sqlite" and migrations.current_version(self.db) == migrations.NEWEST
        if sqlite_current and self.db.first(_ANY_UNSEALED) is None:
            self.keyring.open()
            return
        with self.db.transaction():
            migrations.migrate(self.db)
            self.keyring.open()
            sealed = self.keys.seal_plaintext()
        if sealed and self.scrub_after_purge:  # the plaintext the sealed rows replaced must leave the files
            self.scrub(vacuum=True)

    # Whether delete_user scrubs right away (cheap on this database) or leaves it to a scheduled `scrub`.
    scrub_after_purge = False

    def scrub(self, *, vacuum: bool = False) -> None:
        """Remove what the database keeps of deleted rows beyond the rows themselves (write-ahead logs,
        free space, dead tuples), so a purged person's bytes leave its files. `vacuum`: also rebuild
        the files where that is a separate, slower step."""

    def close(self) -> None:
        self.db.close()
        self.keyring.close()

    def transaction(self) -> AbstractContextManager[None]:
        """Group several calls into one atomic write (nesting joins the outer one)."""
        return self.db.transaction()

    def try_lock(self, name: str) -> bool:
        """Inside a transaction: hold the lock `name` until it ends, or False when another worker holds it."""
        return self.db.try_lock(name)

    def schema_version(self) -> int:
        return migrations.current_version(self.db)

    # -- tables, for exports, audits and bulk loads -----------------------------------
    def table_names(self) -> list[str]:
        return sorted(self.db.inspect(lambda inspector: inspector.get_table_names()))

    def columns(self, table: str) -> list[str]:
        self._check_table(table)
        return [c["name"] for c in self.db.inspect(lambda inspector: inspector.get_columns(table))]

    def dump_table(self, table: str) -> list[tuple[Any, ...]]:
        """Every row of a table as the database holds it (reflected: backend-only columns included)."""
        self._check_table(table)
        reflected = self.db.inspect(lambda inspector: sa.Table(table, sa.MetaData(), autoload_with=inspector.bind))
        return [tuple(row.values()) for row in self.db.fetch(sa.select(reflected))]

    def copy_rows(self, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> int:
        """Bulk-load rows (imports, benchmarks): no history rows, no validation beyond the schema's."""
        self._check_table(table)
        unknown = set(columns) - set(self.columns(table))
        if unknown:
            raise StoreError(f"table {table} has no columns {sorted(unknown)}")
        target, n = metadata.tables[table], 0
        batch: list[dict[str, Any]] = []
        with self.transaction():
            for row in rows:
                batch.append(dict(zip(columns, row, strict=True)))
                if len(batch) == 10_000:
                    self.db.execute(sa.insert(target), batch)
                    n, batch = n + len(batch), []
            if batch:
                self.db.execute(sa.insert(target), batch)
        return n + len(batch)

    def drop_vector_indexes(self) -> None:
        """Drop the approximate vector indexes before a bulk load (nothing to do without them)."""

    def create_vector_indexes(self) -> None:
        """Build the approximate vector indexes (again) after a bulk load (nothing to do without them)."""

    def _check_table(self, table: str) -> None:
        if table not in self.table_names():
            raise StoreError(f"no table {table!r}")

    # -- identity search -------------------------------------------------------------
    def nearest_keys(
        self, modality: Modality, vector: np.ndarray | Sequence[float], k: int = 5, *, model: str | None = None
    ) -> list[KeyMatch]:
        """The k keys of `modality` (and `model`) nearest to `vector` (see store/vectors.py)."""
        return nearest_keys(self, modality, vector, k, model=model)

    # -- users -----------------------------------------------------------------
    def create_user(self, name: str | None = None, *, placeholder: bool = False, cause: str = "") -> User:
        return self.users.create(name, placeholder=placeholder, cause=cause)

    def get_user(self, user_id: str) -> User:
        return self.users.get(user_id)

    def list_users(self, *, include_placeholders: bool = True) -> list[User]:
        return self.users.all(include_placeholders=include_placeholders)

    def find_users_by_name(self, name: str) -> list[User]:
        return self.users.find_by_name(name)

    def rename_user(self, user_id: str, name: str | None, *, cause: str = "") -> User:
        return self.users.rename(user_id, name, cause=cause)

    def touch_user(self, user_id: str, at: float) -> None:
        self.users.touch(user_id, at)

    def set_placeholder(self, user_id: str, placeholder: bool, *, cause: str = "") -> User:
        return self.users.set_placeholder(user_id, placeholder, cause=cause)

    def merge_users(self, keep_id: str, drop_id: str, *, cause: str = "") -> User:
        """Move everything of `drop_id` onto `keep_id` and remove `drop_id` (a repair: undoable)."""
        self.repairs.merge(keep_id, drop_id, cause=cause)
        return self.users.get(keep_id)

    # -- repairs (store/ops/repair.py) -------------------------------------------------------
    def merge_people(self, keep_id: str, drop_id: str, *, cause: str = "") -> Repair:
        """As merge_users, returning the repair (its id undoes it)."""
        return self.repairs.merge(keep_id, drop_id, cause=cause)

    def split_user(
        self,
        user_id: str,
        episode_ids: Sequence[str],
        *,
        into: str | None = None,
        name: str | None = None,
        key_ids: Sequence[int] = (),
        cause: str = "",
    ) -> Repair:
        """Give these episodes of a person, and what was learnt from them, to another person (new, or `into`)."""
        return self.repairs.split(user_id, episode_ids, into=into, name=name, key_ids=key_ids, cause=cause)

    def undo_repair(self, repair_id: int, *, cause: str = "") -> Repair:
        return self.repairs.undo(repair_id, cause=cause)

    def get_repair(self, repair_id: int) -> Repair:
        return self.repairs.get(repair_id)

    def list_repairs(self, user_id: str | None = None) -> list[Repair]:
        return self.repairs.all(user_id)

    def delete_user(self, user_id: str, *, cause: str = "") -> DeletionReport:
        """Purge the person (their data key first: crypto-shredding), then scrub (outside a transaction)."""
        report = self.users.delete(user_id, cause=cause)
        if self.scrub_after_purge:
            self.scrub()
        return report

    # -- identity keys -----------------------------------------------------------
    def add_key(
        self,
        user_id: str,
        modality: Modality,
        vector: np.ndarray | Sequence[float],
        model: str,
        *,
        condition: str = "",
        cause: str = "",
    ) -> IdentityKey:
        return self.keys.add(user_id, modality, vector, model, condition=condition, cause=cause)

    # -- the memory-writing queue (memory/jobs.py) ------------------------------------------
    def submit_job(
        self, key: str, episode_id: str, payload: str, *, session_end: float, now: float, user_id: str | None = None
    ) -> bool:
        """A finished session as a job, once per key (False: that key was already submitted)."""
        return self.jobs.submit(key, episode_id, payload, session_end=session_end, now=now, user_id=user_id)

    def job(self, key: str) -> MemoryJob:
        return self.jobs.get(key)

    def claim_job(
        self,
        worker: str,
        now: float,
        *,
        lease_s: float,
        key: str | None = None,
        stale: Callable[[str], bool] = lambda _: False,
        kind: JobKind | None = None,
    ) -> MemoryJob | None:
        return self.jobs.claim(worker, now, lease_s=lease_s, key=key, stale=stale, kind=kind)

    def finish_job(self, key: str, worker: str, *, outcome: str, fallback: str = "", now: float) -> None:
        self.jobs.finish(key, worker, outcome=outcome, fallback=fallback, now=now)

    def retry_job_later(self, key: str, worker: str, *, error: str, not_before: float) -> None:
        self.jobs.retry_later(key, worker, error=error, not_before=not_before)

    def fail_job(self, key: str, worker: str, *, error: str, now: float) -> None:
        self.jobs.fail(key, worker, error=error, now=now)

    def job_keys(self, status: str) -> list[str]:
        return self.jobs.keys(status)

    def list_jobs(self) -> list[MemoryJob]:
        return self.jobs.all()

    def job_stats(self, now: float, *, window: int = 500) -> QueueStats:
        return self.jobs.stats(now, window=window)

    def list_keys(self, modality: Modality | None = None, user_id: str | None = None) -> list[IdentityKey]:
        return self.keys.all(modality, user_id)

    def delete_key(self, key_id: int, *, cause: str = "") -> None:
        self.keys.delete(key_id, cause=cause)

    def key_count(self, modality: Modality, model: str) -> int:
        return self.keys.count(modality, model)

    def key_user_ids(self, modality: Modality, model: str, limit: int | None = None) -> list[str]:
        """Distinct users with keys of one encoder (at most `limit`: "are there n users" stops at n)."""
        return self.keys.user_ids(modality, model, limit)

    def newest_key_id(self) -> int:
        """The largest key id (0 without keys): it grows whenever a key is added, on any worker."""
        return self.keys.newest_id()

    def key_matrix(self, modality: Modality, model: str) -> tuple[list[int], list[str], np.ndarray]:
        """(key ids, user ids, (n, dim) float32 matrix) of one encoder's keys, in id order."""
        return self.keys.matrix(modality, model)

    # -- profile facts -------------------------------------------------------------
    def add_fact(self, fact: Fact, *, cause: str = "", evidence_from: Sequence[str] = ()) -> Fact:
        return self.facts.add(fact, cause=cause, evidence_from=evidence_from)

    def get_fact(self, fact_id: str) -> Fact:
        return self.facts.get(fact_id)

    def list_facts(
        self, user_id: str, *, kinds: Sequence[FactKind] | None = None, include_history: bool = False
    ) -> list[Fact]:
        return self.facts.all(user_id, kinds=kinds, include_history=include_history)

    def supersede_fact(
        self,
        old_id: str,
        new: Fact,
        *,
        at: float | None = None,
        cause: str = "",
        contradicted: bool = False,
        evidence_from: Sequence[str] = (),
    ) -> Fact:
        return self.facts.supersede(
            old_id, new, at=at, cause=cause, contradicted=contradicted, evidence_from=evidence_from
        )

    def confirm_fact(
        self, fact_id: str, *, episode_id: str | None, at: float, source_text: str | None = None, cause: str = ""
    ) -> Fact:
        return self.facts.confirm(fact_id, episode_id=episode_id, at=at, source_text=source_text, cause=cause)

    def delete_fact(self, fact_id: str, *, cause: str = "") -> None:
        self.facts.delete(fact_id, cause=cause)

    def close_fact(
        self,
        fact_id: str,
        *,
        at: float | None = None,
        superseded_by: str | None = None,
        cause: str = "",
        contradicted: bool = False,
        episode_id: str | None = None,
        source_text: str | None = None,
    ) -> Fact:
        return self.facts.close(
            fact_id,
            at=at,
            superseded_by=superseded_by,
            cause=cause,
            contradicted=contradicted,
            episode_id=episode_id,
            source_text=source_text,
        )

    def set_fact_sensitivity(self, fact_id: str, sensitivity: Sensitivity, *, cause: str = "") -> Fact:
        return self.facts.set_sensitivity(fact_id, sensitivity, cause=cause)

    def forget_facts(self, user_id: str, fact_ids: Sequence[str], *, cause: str = "") -> int:
        return self.facts.forget(user_id, fact_ids, cause=cause)

    def record_consent(self, event: ConsentEvent) -> ConsentEvent:
        return self.consent.record(event)

    def consent_events(self, user_id: str | None) -> list[ConsentEvent]:
        return self.consent.of_user(user_id)

    def mark_facts_used(self, fact_ids: Sequence[str], at: float) -> None:
        self.facts.mark_used(fact_ids, at)

    # -- relations (social graph) --------------------------------------------------
    def add_relation(self, relation: Relation, *, cause: str = "") -> Relation:
        return self.relations.add(relation, cause=cause)

    def list_relations(self, user_id: str, *, include_history: bool = False) -> list[Relation]:
        return self.relations.all(user_id, include_history=include_history)

    def close_relation(
        self,
        relation_id: str,
        *,
        at: float | None = None,
        cause: str = "",
        contradicted: bool = False,
        episode_id: str | None = None,
        source_text: str | None = None,
    ) -> Relation:
        return self.relations.close(
            relation_id, at=at, cause=cause, contradicted=contradicted, episode_id=episode_id, source_text=source_text
        )

    def confirm_relation(
        self, relation_id: str, *, episode_id: str | None, at: float, source_text: str | None = None, cause: str = ""
    ) -> Relation:
        return self.relations.confirm(relation_id, episode_id=episode_id, at=at, source_text=source_text, cause=cause)

    # -- evidence links ----------------------------------------------------------------
    def fact_evidence(self, fact_id: str) -> list[Evidence]:
        """The episodes that said (+1) or contradicted (-1) a fact, oldest first."""
        return self.evidence.of("fact", fact_id)

    def relation_evidence(self, relation_id: str) -> list[Evidence]:
        return self.evidence.of("relation", relation_id)

    # -- episodes --------------------------------------------------------------------
    def add_episode(self, episode: Episode, *, cause: str = "") -> Episode:
        return self.episodes.add(episode, cause=cause)

    def get_episode(self, episode_id: str) -> Episode:
        return self.episodes.get(episode_id)

    def update_episode(self, episode: Episode, *, cause: str = "") -> Episode:
        return self.episodes.update(episode, cause=cause)

    def list_episodes(self, user_id: str | None = None, *, status: str | None = None) -> list[Episode]:
        return self.episodes.all(user_id, status=status)

    # -- history ---------------------------------------------------------------------
    def history(self, user_id: str | None = None, limit: int | None = None) -> list[HistoryEntry]:
        return self.log.entries(user_id, limit)

    def log_noop(self, entity: str, entity_id: str, user_id: str | None, detail: dict[str, Any], cause: str) -> None:
        self.log.noop(entity, entity_id, user_id, detail, cause)

    # -- derived views -----------------------------------------------------------------
    def export_user(self, user_id: str) -> dict[str, Any]:
        """Everything held about one user, as one JSON-serialisable dict."""
        user = self.get_user(user_id)
        facts = self.list_facts(user_id, include_history=True)
        relations = self.list_relations(user_id, include_history=True)
        evidence = self.evidence.of_items([f.id for f in facts], [r.id for r in relations])
        return {
            "format": "egomem.export/1",
            "user": user.model_dump(),
            "keys": [k.model_dump() for k in self.list_keys(user_id=user_id)],
            "facts": [f.model_dump() for f in facts],
            "relations": [r.model_dump() for r in relations],
            "evidence": [e.model_dump() for e in evidence],
            "episodes": [e.model_dump() for e in self.list_episodes(user_id)],
            "history": [h.model_dump() for h in self.history(user_id)],
            "consent": [e.model_dump() for e in self.consent_events(user_id)],
        }
