"""Identity keys: face and voice embeddings of a person, as portable float32 blobs, sealed at rest.

`vector` holds the float32 bytes sealed under the person's data key (store/crypto.py, keyring.py):
every read opens them; a key that does not open (altered bytes, or a person whose data key was
destroyed, as in a copy of the database made before their purge) is left out, with one warning, so
that person is unknown and everyone else is unaffected. On a database with native vector search the
key is also written, in plaintext, to the pgvector `embedding` column in the same INSERT, which the
nearest-keys query searches (docs/privacy.md says what that means for a purge).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import sqlalchemy as sa
from sqlalchemy.engine import RowMapping

from egomem.encoders import check_dim
from egomem.errors import DimensionError, NotFoundError
from egomem.schemas import IdentityKey, Modality, Op, now
from egomem.store.capabilities import StoreCapabilities
from egomem.store.crypto import SEAL_OVERHEAD, key_context
from egomem.store.db import Database, is_row_id
from egomem.store.keyring import Keyring
from egomem.store.ops.history import HistoryOps
from egomem.store.ops.users import UserOps
from egomem.store.schema import KEY_COLUMNS, identity_keys


def vector_to_blob(vector: np.ndarray | Sequence[float]) -> tuple[bytes, int]:
    arr = np.asarray(vector, dtype=np.float32)
    if arr.ndim != 1 or arr.size == 0:
        raise DimensionError(f"an identity key must be a non-empty 1-d vector, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise DimensionError("an identity key contains NaN or infinite values")
    return arr.astype("<f4").tobytes(), int(arr.size)


def blob_to_vector(blob: bytes) -> np.ndarray:
    return np.frombuffer(bytes(blob), dtype="<f4").copy()


def _key(row: RowMapping, plain: bytes) -> IdentityKey:
    return IdentityKey(
        id=row["id"],
        user_id=row["user_id"],
        modality=Modality(row["modality"]),
        model=row["model"],
        dim=row["dim"],
        vector=blob_to_vector(plain).tolist(),
        condition=row["condition"],
        created_at=row["created_at"],
    )


# Built once: add and nearest_keys ask this on every call.
_STORED_DIM = (
    sa.select(identity_keys.c.dim)
    # LIMIT 1: every stored key of a model has the same dimension; don't scan them all.
    .where(identity_keys.c.model == sa.bindparam("model"), identity_keys.c.modality == sa.bindparam("modality"))
    .limit(1)
)


# The newest key's id, what identity caches check for new keys: spelled ORDER BY ... LIMIT 1, one backward
# probe of the primary key, because PostgreSQL planned max(id) as a scan of all 1M keys (10 s) while the
# table had no statistics yet (measured after a bulk load, before ANALYZE).
_NEWEST = sa.select(identity_keys.c.id.label("newest")).order_by(identity_keys.c.id.desc()).limit(1)
_OF_ENCODER = sa.and_(
    identity_keys.c.modality == sa.bindparam("modality"), identity_keys.c.model == sa.bindparam("model")
)


_INSERT = sa.insert(identity_keys).returning(identity_keys.c.id)
_MATRIX = (
    sa.select(
        identity_keys.c.id,
        identity_keys.c.user_id,
        identity_keys.c.vector,
        identity_keys.c.sealed,
        identity_keys.c.data_key,
    )
    .where(identity_keys.c.modality == sa.bindparam("modality"), identity_keys.c.model == sa.bindparam("model"))
    .order_by(identity_keys.c.id)
)


_UNSEALED = sa.select(*KEY_COLUMNS).where(identity_keys.c.sealed == 0).order_by(identity_keys.c.id)
_RESEAL = sa.update(identity_keys).where(identity_keys.c.id == sa.bindparam("key_id"))


def open_stored(
    keyring: Keyring, key_id: int, owner: str | None, modality: str, model: str, stored: bytes, sealed: int, dim: int
) -> bytes | None:
    """A stored key's float32 bytes, or None (with one warning per key) when they do not open. `owner`:
    whose data key sealed it (the row's data_key)."""
    if not sealed:  # plaintext, bulk-loaded since the store was opened: sealed at the next open
        return stored
    data_key = None if owner is None else keyring.data_key(owner)
    plain = None if data_key is None else data_key.open(stored, key_context(owner or "", modality, model))
    if plain is None or len(plain) != 4 * dim:
        keyring.warn_once(key_id, f"identity key {key_id} (data key of {owner}) does not open: left out (unknown)")
        return None
    return plain


def reseal_for_their_person(db: Database, keyring: Keyring, rows: list[RowMapping]) -> int:
    """Re-seal these key rows under the data key of the person each now belongs to (before the data key
    that sealed them is destroyed: a purge). Keys that do not open are deleted (nobody could use them)."""
    moved, dropped = [], []
    for r in rows:
        plain = open_stored(
            keyring, r["id"], r["data_key"], r["modality"], r["model"], bytes(r["vector"]), r["sealed"], r["dim"]
        )
        if plain is None:
            dropped.append(r["id"])
            continue
        target = keyring.data_key(r["user_id"], create=True)
        assert target is not None
        sealed = target.seal(plain, key_context(r["user_id"], r["modality"], r["model"]))
        moved.append({"key_id": r["id"], "sealed_vector": sealed, "owner": r["user_id"]})
    if moved:
        statement = _RESEAL.values(vector=sa.bindparam("sealed_vector"), sealed=1, data_key=sa.bindparam("owner"))
        db.execute(statement, moved)
    if dropped:
        db.execute(sa.delete(identity_keys).where(identity_keys.c.id.in_(dropped)))
    return len(moved)


class KeyOps:
    def __init__(
        self, db: Database, log: HistoryOps, users: UserOps, capabilities: StoreCapabilities, keyring: Keyring
    ) -> None:
        self.db, self.log, self.users, self.capabilities, self.keyring = db, log, users, capabilities, keyring
        # matrix(): what each sealed key opened to, per encoder, so the exact search (which reads every key
        # on every call) opens only keys it has not seen; the plaintext the in-process index holds anyway.
        self._opened: dict[tuple[str, str], dict[int, tuple[str, bytes, bytes]]] = {}
        self._opened_generation = 0

    def _open(
        self, key_id: int, owner: str | None, modality: str, model: str, stored: bytes, sealed: int, dim: int
    ) -> bytes | None:
        return open_stored(self.keyring, key_id, owner, modality, model, stored, sealed, dim)

    def seal_plaintext(self) -> int:
        """Seal every plaintext key (schema 2's, or bulk-loaded ones) under its person's data key, in place.
        Returns how many were sealed."""
        with self.db.transaction():
            updates = []
            for r in self.db.fetch(_UNSEALED):
                data_key = self.keyring.data_key(r["user_id"], create=True)
                assert data_key is not None  # just made, or existing and opened by this master key
                context = key_context(r["user_id"], r["modality"], r["model"])
                sealed = data_key.seal(bytes(r["vector"]), context)
                updates.append({"key_id": r["id"], "sealed_vector": sealed, "owner": r["user_id"]})
            if updates:
                statement = _RESEAL.values(
                    vector=sa.bindparam("sealed_vector"), sealed=1, data_key=sa.bindparam("owner")
                )
                self.db.execute(statement, updates)
        return len(updates)

    def stored_dim(self, modality: Modality, model: str) -> int | None:
        """The dimension of this encoder's stored keys (all equal: add enforces it), None when there are none."""
        row = self.db.first(_STORED_DIM, {"model": model, "modality": modality.value})
        return None if row is None else int(row["dim"])

    def add(
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
        check_dim(model, dim)
        with self.db.transaction():
            self.users.get(user_id)
            stored = self.stored_dim(modality, model)
            if stored is not None and stored != dim:
                raise DimensionError(f"stored {model} keys have {stored} dimensions, got {dim}")
            created = now()
            data_key = self.keyring.data_key(user_id, create=True)
            assert data_key is not None  # made now, or opened by the master key that opened the keyring
            values: dict[str, object] = {
                "user_id": user_id,
                "modality": modality.value,
                "model": model,
                "dim": dim,
                "vector": data_key.seal(blob, key_context(user_id, modality.value, model)),
                "sealed": 1,
                "data_key": user_id,
                "condition": condition,
                "created_at": created,
            }
            if self.capabilities.native_vector_search:
                values["embedding"] = np.frombuffer(blob, dtype="<f4")
            row = self.db.first(_INSERT, values)
            key_id = int(row["id"]) if row else 0
            after = {"modality": modality.value, "model": model}
            self.log.write(Op.ADD, "key", str(key_id), user_id, None, after, cause)
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

    def all(self, modality: Modality | None = None, user_id: str | None = None) -> list[IdentityKey]:
        query = sa.select(*KEY_COLUMNS)
        if modality is not None:
            query = query.where(identity_keys.c.modality == Modality(modality).value)
        if user_id is not None:
            query = query.where(identity_keys.c.user_id == user_id)
        out = []
        for r in self.db.fetch(query.order_by(identity_keys.c.id)):
            plain = self._open(
                r["id"], r["data_key"], r["modality"], r["model"], bytes(r["vector"]), r["sealed"], r["dim"]
            )
            if plain is not None:
                out.append(_key(r, plain))
        return out

    def delete(self, key_id: int, *, cause: str = "") -> None:
        if not is_row_id(key_id):
            raise NotFoundError(f"unknown key id {key_id}")
        with self.db.transaction():
            row = self.db.first(sa.select(*KEY_COLUMNS).where(identity_keys.c.id == key_id))
            if row is None:
                raise NotFoundError(f"unknown key id {key_id}")
            self.db.execute(sa.delete(identity_keys).where(identity_keys.c.id == key_id))
            before = {"modality": row["modality"], "model": row["model"]}
            self.log.write(Op.DELETE, "key", str(key_id), row["user_id"], before, None, cause)

    def newest_id(self) -> int:
        """The largest key id (0 without keys): it grows whenever a key is added, on any worker."""
        row = self.db.first(_NEWEST)
        return int(row["newest"]) if row else 0

    def count(self, modality: Modality, model: str) -> int:
        query = sa.select(sa.func.count().label("n")).select_from(identity_keys).where(_OF_ENCODER)
        row = self.db.first(query, {"modality": modality.value, "model": model})
        return int(row["n"]) if row else 0

    def user_ids(self, modality: Modality, model: str, limit: int | None = None) -> list[str]:
        """Distinct users with keys of one encoder (at most `limit`: "are there n users" stops at n)."""
        query = sa.select(identity_keys.c.user_id).where(_OF_ENCODER).distinct().limit(limit)
        return [str(r[0]) for r in self.db.fetch_tuples(query, {"modality": modality.value, "model": model})]

    def matrix(self, modality: Modality, model: str) -> tuple[list[int], list[str], np.ndarray]:
        """(key ids, user ids, (n, dim) float32 matrix) of one encoder's keys, in id order.

        Reads the raw blobs as plain tuples: decoding 100k keys through IdentityKey models
        costs seconds, and even a name mapping per row triples the read (the exact search on SQLite
        reads them on every call). Keys that do not open are left out."""
        rows = self.db.fetch_tuples(_MATRIX, {"modality": modality.value, "model": model})
        ids: list[int] = []
        users: list[str] = []
        blobs: list[bytes] = []
        dim = 0
        if self._opened_generation != self.keyring.generation:  # a data key was destroyed: open afresh
            self._opened.clear()
            self._opened_generation = self.keyring.generation
        cache = self._opened.setdefault((modality.value, model), {})
        for key_id, user_id, stored, sealed, owner in rows:
            if not dim:
                dim = (len(stored) - SEAL_OVERHEAD if sealed else len(stored)) // 4
            # Sealed bytes are unique (a random nonce each): the same bytes under the same data key open the same.
            hit = cache.get(key_id)
            if hit is not None and hit[1] == stored and hit[0] == owner:
                plain: bytes | None = hit[2]
            else:
                plain = self._open(key_id, owner, modality.value, model, bytes(stored), sealed, dim)
                if plain is not None:
                    cache[key_id] = (owner or "", stored, plain)
            if plain is not None:
                ids.append(key_id)
                users.append(user_id)
                blobs.append(plain)
        if len(cache) > len(ids):  # deleted keys leave the cache
            self._opened[(modality.value, model)] = {k: cache[k] for k in ids}
        matrix = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), dim)
        return ids, users, matrix
