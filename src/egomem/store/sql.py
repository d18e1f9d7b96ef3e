"""The memory logic written once in portable SQL; drivers supply connections.

A driver subclass provides `_begin/_commit/_rollback`, `_execute` and `_lastrowid`
for its database; everything a memory operation means (history rows, cascading
purges, supersession) lives here, so SQLite and PostgreSQL cannot drift apart.
Placeholders are written `?`; drivers translate them if their database wants
another style.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from egomem.errors import DimensionError, NotFoundError, StoreError
from egomem.schemas import (
    DeletionReport,
    Episode,
    Fact,
    FactKind,
    HistoryEntry,
    IdentityKey,
    Modality,
    Op,
    Relation,
    User,
    now,
)
from egomem.store.base import MemoryStore

# Known encoders and the dimension of their vectors. A vector of another size for
# one of these models is refused before it reaches the database.
MODEL_DIMS: dict[str, int] = {"dlib_resnet_v1": 128, "resemblyzer": 256}

Row = tuple[Any, ...]

_FACT_COLS = (
    "id, user_id, kind, text, confidence, source_episode, source_text, created_at, "
    "valid_from, valid_to, superseded_by, importance, use_count, last_used"
)
_REL_COLS = "id, subject_id, relation, object_id, object_name, source_episode, created_at, valid_from, valid_to"
_EP_COLS = "id, start_t, end_t, user_transcript, assistant_transcript, summary, status, created_at"


def vector_to_blob(vector: np.ndarray | Sequence[float]) -> tuple[bytes, int]:
    arr = np.asarray(vector, dtype=np.float32)
    if arr.ndim != 1 or arr.size == 0:
        raise DimensionError(f"an identity key must be a non-empty 1-d vector, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise DimensionError("an identity key contains NaN or infinite values")
    return arr.astype("<f4").tobytes(), int(arr.size)


def blob_to_vector(blob: bytes) -> np.ndarray:
    return np.frombuffer(bytes(blob), dtype="<f4").copy()


def _user(row: Row) -> User:
    return User(id=row[0], name=row[1], placeholder=bool(row[2]), created_at=row[3], last_seen=row[4])


def _fact(row: Row) -> Fact:
    keys = [c.strip() for c in _FACT_COLS.split(",")]
    return Fact(**dict(zip(keys, row, strict=True)))


def _relation(row: Row) -> Relation:
    keys = [c.strip() for c in _REL_COLS.split(",")]
    return Relation(**dict(zip(keys, row, strict=True)))


class SQLStore(MemoryStore):
    """Shared implementation over a DB-API connection (see module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._depth = 0

    # -- driver hooks ----------------------------------------------------------
    def _begin(self) -> None:
        raise NotImplementedError

    def _commit(self) -> None:
        raise NotImplementedError

    def _rollback(self) -> None:
        raise NotImplementedError

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        raise NotImplementedError

    def _insert_returning_id(self, sql: str, params: Sequence[Any]) -> int:
        raise NotImplementedError

    # -- transactions ------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._lock:
            outer = self._depth == 0
            if outer:
                self._begin()
            self._depth += 1
            try:
                yield
            except BaseException:
                self._depth -= 1
                if outer:
                    self._rollback()
                raise
            self._depth -= 1
            if outer:
                self._commit()

    def _one(self, sql: str, params: Sequence[Any], what: str) -> Row:
        rows = self._execute(sql, params)
        if not rows:
            raise NotFoundError(f"unknown {what}")
        return rows[0]

    def _log(
        self,
        op: Op,
        entity: str,
        entity_id: str,
        user_id: str | None,
        before: dict[str, Any] | None,
        after: dict[str, Any] | None,
        cause: str,
        other_user_id: str | None = None,
    ) -> None:
        self._execute(
            "INSERT INTO history (at, op, entity, entity_id, user_id, other_user_id, before_json, after_json, cause)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                now(),
                op.value,
                entity,
                entity_id,
                user_id,
                other_user_id,
                None if before is None else json.dumps(before, default=str),
                None if after is None else json.dumps(after, default=str),
                cause,
            ),
        )

    # -- users -------------------------------------------------------------------
    def create_user(self, name: str | None = None, *, placeholder: bool = False, cause: str = "") -> User:
        user = User(name=_clean_name(name), placeholder=placeholder)
        with self.transaction():
            self._execute(
                "INSERT INTO users (id, name, placeholder, created_at, last_seen) VALUES (?, ?, ?, ?, ?)",
                (user.id, user.name, int(user.placeholder), user.created_at, user.last_seen),
            )
            self._log(Op.ADD, "user", user.id, user.id, None, user.model_dump(), cause)
        return user

    def get_user(self, user_id: str) -> User:
        row = self._one(
            "SELECT id, name, placeholder, created_at, last_seen FROM users WHERE id = ?",
            (user_id,),
            f"user id {user_id!r}",
        )
        return _user(row)

    def list_users(self, *, include_placeholders: bool = True) -> list[User]:
        sql = "SELECT id, name, placeholder, created_at, last_seen FROM users"
        if not include_placeholders:
            sql += " WHERE placeholder = 0"
        return [_user(r) for r in self._execute(sql + " ORDER BY created_at, id")]

    def find_users_by_name(self, name: str) -> list[User]:
        rows = self._execute(
            "SELECT id, name, placeholder, created_at, last_seen FROM users WHERE lower(name) = lower(?)"
            " ORDER BY placeholder, created_at",
            (name.strip(),),
        )
        return [_user(r) for r in rows]

    def rename_user(self, user_id: str, name: str | None, *, cause: str = "") -> User:
        with self.transaction():
            before = self.get_user(user_id)
            self._execute("UPDATE users SET name = ? WHERE id = ?", (_clean_name(name), user_id))
            after = self.get_user(user_id)
            self._log(Op.UPDATE, "user", user_id, user_id, before.model_dump(), after.model_dump(), cause)
        return after

    def touch_user(self, user_id: str, at: float) -> None:
        with self.transaction():
            self.get_user(user_id)
            self._execute("UPDATE users SET last_seen = ? WHERE id = ?", (at, user_id))

    def set_placeholder(self, user_id: str, placeholder: bool, *, cause: str = "") -> User:
        with self.transaction():
            before = self.get_user(user_id)
            self._execute("UPDATE users SET placeholder = ? WHERE id = ?", (int(placeholder), user_id))
            after = self.get_user(user_id)
            self._log(Op.UPDATE, "user", user_id, user_id, before.model_dump(), after.model_dump(), cause)
        return after

    def merge_users(self, keep_id: str, drop_id: str, *, cause: str = "") -> User:
        if keep_id == drop_id:
            raise StoreError("cannot merge a user into itself")
        with self.transaction():
            keep, drop = self.get_user(keep_id), self.get_user(drop_id)
            for table, col in (
                ("identity_keys", "user_id"),
                ("facts", "user_id"),
                ("relations", "subject_id"),
                ("relations", "object_id"),
            ):
                self._execute(f"UPDATE {table} SET {col} = ? WHERE {col} = ?", (keep_id, drop_id))
            # An edge between the two people becomes a self-loop after the merge: drop it.
            self._execute("DELETE FROM relations WHERE subject_id = ? AND object_id = ?", (keep_id, keep_id))
            self._execute(
                "INSERT INTO episode_participants (episode_id, user_id)"
                " SELECT episode_id, ? FROM episode_participants p WHERE user_id = ? AND NOT EXISTS"
                " (SELECT 1 FROM episode_participants q WHERE q.episode_id = p.episode_id AND q.user_id = ?)",
                (keep_id, drop_id, keep_id),
            )
            self._execute("UPDATE history SET user_id = ? WHERE user_id = ?", (keep_id, drop_id))
            self._execute("UPDATE history SET other_user_id = ? WHERE other_user_id = ?", (keep_id, drop_id))
            name = keep.name or drop.name
            placeholder = keep.placeholder and drop.placeholder
            last_seen = max((t for t in (keep.last_seen, drop.last_seen) if t is not None), default=None)
            self._execute(
                "UPDATE users SET name = ?, placeholder = ?, last_seen = ? WHERE id = ?",
                (name, int(placeholder), last_seen, keep_id),
            )
            self._execute("DELETE FROM users WHERE id = ?", (drop_id,))
            after = self.get_user(keep_id)
            self._log(
                Op.UPDATE,
                "user",
                keep_id,
                keep_id,
                {"merged": drop.model_dump(), "into": keep.model_dump()},
                after.model_dump(),
                cause or "merge",
            )
        return after

    def delete_user(self, user_id: str, *, cause: str = "") -> DeletionReport:
        removed: dict[str, int] = {}
        with self.transaction():
            self.get_user(user_id)

            def count(sql: str, params: Sequence[Any]) -> int:
                return int(self._execute(sql, params)[0][0])

            solo = [
                r[0]
                for r in self._execute(
                    "SELECT episode_id FROM episode_participants WHERE user_id = ? AND episode_id NOT IN"
                    " (SELECT episode_id FROM episode_participants WHERE user_id <> ?)",
                    (user_id, user_id),
                )
            ]
            removed["identity_keys"] = count("SELECT COUNT(*) FROM identity_keys WHERE user_id = ?", (user_id,))
            removed["facts"] = count("SELECT COUNT(*) FROM facts WHERE user_id = ?", (user_id,))
            removed["relations"] = count(
                "SELECT COUNT(*) FROM relations WHERE subject_id = ? OR object_id = ?", (user_id, user_id)
            )
            removed["history"] = count(
                "SELECT COUNT(*) FROM history WHERE user_id = ? OR other_user_id = ?", (user_id, user_id)
            )
            removed["episodes"] = len(solo)
            for ep in solo:
                self._execute("DELETE FROM episodes WHERE id = ?", (ep,))
            self._execute("DELETE FROM history WHERE user_id = ? OR other_user_id = ?", (user_id, user_id))
            # Foreign keys cascade: identity keys, facts, relation edges, participations.
            self._execute("DELETE FROM users WHERE id = ?", (user_id,))
            # The audit row names only a one-way hash: the deletion is provable, the person is gone.
            digest = hashlib.sha256(user_id.encode()).hexdigest()[:16]
            self._log(Op.DELETE, "user", f"purged:{digest}", None, None, {"removed": removed}, cause)
        return DeletionReport(user_id=user_id, removed=removed)

    # -- identity keys -----------------------------------------------------------------
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
        modality = Modality(modality)
        blob, dim = vector_to_blob(vector)
        expected = MODEL_DIMS.get(model)
        if expected is not None and dim != expected:
            raise DimensionError(f"{model} vectors have {expected} dimensions, got {dim}")
        with self.transaction():
            self.get_user(user_id)
            rows = self._execute(
                # LIMIT 1: every stored key of a model has the same dimension; don't scan them all.
                "SELECT dim FROM identity_keys WHERE model = ? AND modality = ? LIMIT 1",
                (model, modality.value),
            )
            if rows and int(rows[0][0]) != dim:
                raise DimensionError(f"stored {model} keys have {rows[0][0]} dimensions, got {dim}")
            created = now()
            key_id = self._insert_returning_id(
                "INSERT INTO identity_keys (user_id, modality, model, dim, vector, condition, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (user_id, modality.value, model, dim, blob, condition, created),
            )
            self._log(Op.ADD, "key", str(key_id), user_id, None, {"modality": modality.value, "model": model}, cause)
        return IdentityKey(
            id=key_id,
            user_id=user_id,
            modality=modality,
            model=model,
            dim=dim,
            vector=np.frombuffer(blob, dtype="<f4").tolist(),
            created_at=created,
            condition=condition,
        )

    def list_keys(self, modality: Modality | None = None, user_id: str | None = None) -> list[IdentityKey]:
        sql = "SELECT id, user_id, modality, model, dim, vector, condition, created_at FROM identity_keys WHERE 1=1"
        params: list[Any] = []
        if modality is not None:
            sql += " AND modality = ?"
            params.append(Modality(modality).value)
        if user_id is not None:
            sql += " AND user_id = ?"
            params.append(user_id)
        return [
            IdentityKey(
                id=r[0],
                user_id=r[1],
                modality=Modality(r[2]),
                model=r[3],
                dim=r[4],
                vector=blob_to_vector(r[5]).tolist(),
                condition=r[6],
                created_at=r[7],
            )
            for r in self._execute(sql + " ORDER BY id", params)
        ]

    def delete_key(self, key_id: int, *, cause: str = "") -> None:
        with self.transaction():
            row = self._one(
                "SELECT user_id, modality, model FROM identity_keys WHERE id = ?",
                (key_id,),
                f"key id {key_id}",
            )
            self._execute("DELETE FROM identity_keys WHERE id = ?", (key_id,))
            self._log(Op.DELETE, "key", str(key_id), row[0], {"modality": row[1], "model": row[2]}, None, cause)

    # -- facts ------------------------------------------------------------------------------
    def _insert_fact(self, fact: Fact) -> None:
        if not fact.text.strip():
            raise StoreError("a fact needs non-empty text")
        d = fact.model_dump()
        cols = [c.strip() for c in _FACT_COLS.split(",")]
        self._execute(
            f"INSERT INTO facts ({_FACT_COLS}) VALUES ({', '.join('?' * len(cols))})",
            [d[c].value if isinstance(d[c], FactKind) else d[c] for c in cols],
        )

    def add_fact(self, fact: Fact, *, cause: str = "") -> Fact:
        with self.transaction():
            self.get_user(fact.user_id)
            self._insert_fact(fact)
            self._log(Op.ADD, "fact", fact.id, fact.user_id, None, fact.model_dump(), cause)
        return fact

    def get_fact(self, fact_id: str) -> Fact:
        return _fact(self._one(f"SELECT {_FACT_COLS} FROM facts WHERE id = ?", (fact_id,), f"fact id {fact_id!r}"))

    def list_facts(
        self,
        user_id: str,
        *,
        kinds: Sequence[FactKind] | None = None,
        include_history: bool = False,
    ) -> list[Fact]:
        sql = f"SELECT {_FACT_COLS} FROM facts WHERE user_id = ?"
        params: list[Any] = [user_id]
        if not include_history:
            sql += " AND valid_to IS NULL"
        if kinds:
            sql += f" AND kind IN ({', '.join('?' * len(kinds))})"
            params.extend(FactKind(k).value for k in kinds)
        return [_fact(r) for r in self._execute(sql + " ORDER BY valid_from, id", params)]

    def supersede_fact(self, old_id: str, new: Fact, *, at: float | None = None, cause: str = "") -> Fact:
        at = now() if at is None else at
        with self.transaction():
            old = self.get_fact(old_id)
            if old.valid_to is not None:
                raise StoreError(f"fact {old_id} is already superseded")
            if new.user_id != old.user_id:
                raise StoreError("a fact can only be superseded by a fact of the same user")
            self._execute("UPDATE facts SET valid_to = ?, superseded_by = ? WHERE id = ?", (at, new.id, old_id))
            self._insert_fact(new)
            self._log(Op.UPDATE, "fact", new.id, new.user_id, old.model_dump(), new.model_dump(), cause)
        return new

    def delete_fact(self, fact_id: str, *, cause: str = "") -> None:
        with self.transaction():
            old = self.get_fact(fact_id)
            self._execute("DELETE FROM facts WHERE id = ?", (fact_id,))
            self._log(Op.DELETE, "fact", fact_id, old.user_id, old.model_dump(), None, cause)

    def close_fact(
        self, fact_id: str, *, at: float | None = None, superseded_by: str | None = None, cause: str = ""
    ) -> Fact:
        at = now() if at is None else at
        with self.transaction():
            old = self.get_fact(fact_id)
            if old.valid_to is not None:
                raise StoreError(f"fact {fact_id} is already closed")
            if superseded_by is not None and self.get_fact(superseded_by).user_id != old.user_id:
                raise StoreError("a fact can only be merged into a fact of the same user")
            self._execute("UPDATE facts SET valid_to = ?, superseded_by = ? WHERE id = ?", (at, superseded_by, fact_id))
            new = self.get_fact(fact_id)
            self._log(Op.DELETE, "fact", fact_id, old.user_id, old.model_dump(), new.model_dump(), cause)
        return new

    def mark_facts_used(self, fact_ids: Sequence[str], at: float) -> None:
        if not fact_ids:
            return
        with self.transaction():
            for fid in fact_ids:
                self._execute("UPDATE facts SET use_count = use_count + 1, last_used = ? WHERE id = ?", (at, fid))

    # -- relations ------------------------------------------------------------------------------
    def add_relation(self, relation: Relation, *, cause: str = "") -> Relation:
        if not relation.relation.strip():
            raise StoreError("a relation needs a non-empty relation word")
        if relation.object_id is None and not (relation.object_name or "").strip():
            raise StoreError("a relation needs an object user or an object name")
        with self.transaction():
            self.get_user(relation.subject_id)
            if relation.object_id is not None:
                self.get_user(relation.object_id)
            d = relation.model_dump()
            cols = [c.strip() for c in _REL_COLS.split(",")]
            self._execute(
                f"INSERT INTO relations ({_REL_COLS}) VALUES ({', '.join('?' * len(cols))})",
                [d[c] for c in cols],
            )
            self._log(
                Op.ADD,
                "relation",
                relation.id,
                relation.subject_id,
                None,
                d,
                cause,
                other_user_id=relation.object_id,
            )
        return relation

    def list_relations(self, user_id: str, *, include_history: bool = False) -> list[Relation]:
        sql = f"SELECT {_REL_COLS} FROM relations WHERE (subject_id = ? OR object_id = ?)"
        if not include_history:
            sql += " AND valid_to IS NULL"
        return [_relation(r) for r in self._execute(sql + " ORDER BY valid_from, id", (user_id, user_id))]

    def close_relation(self, relation_id: str, *, at: float | None = None, cause: str = "") -> Relation:
        at = now() if at is None else at
        with self.transaction():
            old = _relation(
                self._one(
                    f"SELECT {_REL_COLS} FROM relations WHERE id = ?",
                    (relation_id,),
                    f"relation id {relation_id!r}",
                )
            )
            self._execute("UPDATE relations SET valid_to = ? WHERE id = ?", (at, relation_id))
            new = old.model_copy(update={"valid_to": at})
            self._log(
                Op.UPDATE,
                "relation",
                relation_id,
                old.subject_id,
                old.model_dump(),
                new.model_dump(),
                cause,
                other_user_id=old.object_id,
            )
        return new

    # -- episodes -------------------------------------------------------------------------------
    def _episode(self, row: Row) -> Episode:
        parts = [
            r[0]
            for r in self._execute(
                "SELECT user_id FROM episode_participants WHERE episode_id = ? ORDER BY user_id", (row[0],)
            )
        ]
        return Episode(
            id=row[0],
            start=row[1],
            end=row[2],
            user_transcript=row[3],
            assistant_transcript=row[4],
            summary=row[5],
            status=row[6],
            created_at=row[7],
            participants=parts,
        )

    def _write_participants(self, episode: Episode) -> None:
        self._execute("DELETE FROM episode_participants WHERE episode_id = ?", (episode.id,))
        for uid in dict.fromkeys(episode.participants):
            self.get_user(uid)
            self._execute("INSERT INTO episode_participants (episode_id, user_id) VALUES (?, ?)", (episode.id, uid))

    def add_episode(self, episode: Episode, *, cause: str = "") -> Episode:
        if episode.end < episode.start:
            raise StoreError("an episode cannot end before it starts")
        with self.transaction():
            self._execute(
                f"INSERT INTO episodes ({_EP_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    episode.id,
                    episode.start,
                    episode.end,
                    episode.user_transcript,
                    episode.assistant_transcript,
                    episode.summary,
                    episode.status,
                    episode.created_at,
                ),
            )
            self._write_participants(episode)
            for uid in dict.fromkeys(episode.participants):
                self._log(
                    Op.ADD,
                    "episode",
                    episode.id,
                    uid,
                    None,
                    {"start": episode.start, "end": episode.end},
                    cause,
                )
        return self.get_episode(episode.id)

    def get_episode(self, episode_id: str) -> Episode:
        return self._episode(
            self._one(f"SELECT {_EP_COLS} FROM episodes WHERE id = ?", (episode_id,), f"episode id {episode_id!r}")
        )

    def update_episode(self, episode: Episode, *, cause: str = "") -> Episode:
        with self.transaction():
            self.get_episode(episode.id)
            self._execute(
                "UPDATE episodes SET start_t = ?, end_t = ?, user_transcript = ?, assistant_transcript = ?,"
                " summary = ?, status = ? WHERE id = ?",
                (
                    episode.start,
                    episode.end,
                    episode.user_transcript,
                    episode.assistant_transcript,
                    episode.summary,
                    episode.status,
                    episode.id,
                ),
            )
            self._write_participants(episode)
            for uid in dict.fromkeys(episode.participants):
                self._log(Op.UPDATE, "episode", episode.id, uid, None, {"status": episode.status}, cause)
        return self.get_episode(episode.id)

    def list_episodes(self, user_id: str | None = None) -> list[Episode]:
        if user_id is None:
            rows = self._execute(f"SELECT {_EP_COLS} FROM episodes ORDER BY start_t, id")
        else:
            rows = self._execute(
                f"SELECT {_EP_COLS} FROM episodes WHERE id IN"
                " (SELECT episode_id FROM episode_participants WHERE user_id = ?) ORDER BY start_t, id",
                (user_id,),
            )
        return [self._episode(r) for r in rows]

    # -- history ------------------------------------------------------------------------------------
    def history(self, user_id: str | None = None, limit: int | None = None) -> list[HistoryEntry]:
        sql = "SELECT id, at, op, entity, entity_id, user_id, before_json, after_json, cause FROM history"
        params: list[Any] = []
        if user_id is not None:
            sql += " WHERE user_id = ? OR other_user_id = ?"
            params += [user_id, user_id]
        sql += " ORDER BY id"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        return [
            HistoryEntry(
                id=r[0],
                at=r[1],
                op=Op(r[2]),
                entity=r[3],
                entity_id=r[4],
                user_id=r[5],
                before=None if r[6] is None else json.loads(r[6]),
                after=None if r[7] is None else json.loads(r[7]),
                cause=r[8],
            )
            for r in self._execute(sql, params)
        ]

    def log_noop(self, entity: str, entity_id: str, user_id: str | None, detail: dict[str, Any], cause: str) -> None:
        with self.transaction():
            self._log(Op.NOOP, entity, entity_id, user_id, None, detail, cause)


def _clean_name(name: str | None) -> str | None:
    if name is None:
        return None
    name = " ".join(name.split())
    if len(name) > 200:
        raise StoreError("a name may be at most 200 characters")
    return name or None
