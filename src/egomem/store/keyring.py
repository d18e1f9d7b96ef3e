"""The keyring: each person's data key, wrapped by the master key, and the check that the master key
is the one the keyring was made with.

Where it lives decides what a purge can promise (docs/privacy.md, "Keys at rest"): SQLite keeps it in
its own file, keyring.db beside memory.db, so a copy of memory.db holds sealed keys and no data key to
open them; PostgreSQL keeps it in the store's schema (every worker of a fleet needs it), where a purge
deletes the wrapped data key in the same transaction as the person's rows.

Opening checks the master key before anything is read or written: a keyring without a check value
is new and stores one (the source may create the key then: a new key file); otherwise the key must
open the check value, or MasterKeyError says so in one line. Unwrapped data keys are cached in the
process; a data key that does not unwrap (altered bytes) is None: that person's keys do not open,
they are unknown, everyone else is unaffected.
"""

from __future__ import annotations

import logging
import secrets
import threading

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import RowMapping

from egomem.schemas import now
from egomem.store.crypto import KEY_BYTES, DataKey, MasterKeyError, MasterKeySource
from egomem.store.db import Database
from egomem.store.schema import data_keys, keyring_check, keyring_metadata

log = logging.getLogger(__name__)

_CHECK_PLAINTEXT = b"egomem keyring check/1"
_CHECK_CONTEXT = b"egomem-keyring-check/1"


def _wrap_context(user_id: str) -> bytes:
    return f"egomem-data-key/1\x00{user_id}".encode()


_BY_USER = sa.select(data_keys.c.wrapped).where(data_keys.c.user_id == sa.bindparam("user_id"))


class Keyring:
    """Data keys of one store, in `db` (the memory database itself, or a keyring file of its own)."""

    def __init__(self, db: Database, source: MasterKeySource, *, separate: bool) -> None:
        self.db = db
        self.source = source
        self.separate = separate  # its own database (SQLite's keyring.db), not the memory database
        self._master: DataKey | None = None
        self._cache: dict[str, DataKey] = {}
        self._unreadable: set[str] = set()  # logged once per person
        self._unopened: set[int] = set()  # key ids, logged once each
        self._lock = threading.Lock()
        self.generation = 0  # grows whenever a data key is destroyed (caches of opened keys are dropped)

    @property
    def where(self) -> str:
        return self.db.where

    def open(self) -> None:
        """Check (or, for a new keyring, set) the master key. Raises MasterKeyError, having read nothing.
        Only a new keyring takes the write lock: opening an existing one is a read."""
        row = self._check() if self._exists() else None
        if row is None:
            with self.db.transaction():
                if self.separate:
                    keyring_metadata.create_all(self.db.connection())
                row = self._check()  # again, under the lock: another process may have made it meanwhile
                if row is None:
                    if self.db.first(sa.select(data_keys.c.user_id).limit(1)) is not None:
                        raise MasterKeyError(f"the keyring in {self.where} holds data keys but no master key check")
                    master = DataKey(self.source.get(create=True))
                    check = master.seal(_CHECK_PLAINTEXT, _CHECK_CONTEXT)
                    self.db.execute(sa.insert(keyring_check).values(id=1, sealed=check))
                    self._master = master
                    return
        master = DataKey(self.source.get(create=False))
        if master.open(bytes(row["sealed"]), _CHECK_CONTEXT) != _CHECK_PLAINTEXT:
            raise MasterKeyError(
                f"the master key from {self.source.where} is not the one the keyring in {self.where} was"
                " made with: nothing was read or written (give the right key; a new one opens nothing)"
            )
        self._master = master

    def _exists(self) -> bool:
        return bool(self.db.inspect(lambda inspector: inspector.has_table("keyring_check")))

    def _check(self) -> RowMapping | None:
        return self.db.first(sa.select(keyring_check.c.sealed).where(keyring_check.c.id == 1))

    def _wrapper(self) -> DataKey:
        if self._master is None:
            raise MasterKeyError("the keyring was not opened")
        return self._master

    def data_key(self, user_id: str, *, create: bool = False) -> DataKey | None:
        """The person's data key; with create=True one is made if they have none. None: they have none,
        or it does not unwrap (altered bytes): their sealed keys cannot be opened."""
        with self._lock:
            cached = self._cache.get(user_id)
        if cached is not None:
            return cached
        row = self.db.first(_BY_USER, {"user_id": user_id})  # a read: no write lock on the keyring
        if row is None and create:
            with self.db.transaction():
                key = secrets.token_bytes(KEY_BYTES)
                wrapped = self._wrapper().seal(key, _wrap_context(user_id))
                insert = (postgresql if self.db.dialect == "postgresql" else sqlite).insert(data_keys)
                values = {"user_id": user_id, "wrapped": wrapped, "created_at": now()}
                self.db.execute(insert.values(values).on_conflict_do_nothing())
                row = self.db.first(_BY_USER, {"user_id": user_id})  # another worker's, if it won the race
                # A key made in a transaction that rolls back was never stored: forget it.
                self.db.after_rollback(lambda: self._forget(user_id))
        if row is None:
            return None
        raw = self._wrapper().open(bytes(row["wrapped"]), _wrap_context(user_id))
        if raw is None or len(raw) != KEY_BYTES:
            if user_id not in self._unreadable:
                self._unreadable.add(user_id)
                log.warning("the data key of user %s does not unwrap (altered?): their keys are unreadable", user_id)
            return None
        key_obj = DataKey(raw)
        with self._lock:
            self._cache[user_id] = key_obj
        return key_obj

    def warn_once(self, key_id: int, message: str) -> None:
        """Log that a sealed key does not open, once per key and process."""
        if key_id not in self._unopened:
            self._unopened.add(key_id)
            log.warning("%s", message)

    def _forget(self, user_id: str) -> None:
        with self._lock:
            self._cache.pop(user_id, None)

    def destroy(self, user_id: str) -> None:
        """Delete the person's data key (crypto-shredding: whatever was sealed under it stays sealed)."""
        self._forget(user_id)
        with self.db.transaction():
            self.db.execute(sa.delete(data_keys).where(data_keys.c.user_id == user_id))
        self.generation += 1

    def rotate(self, new: MasterKeySource) -> int:
        """Wrap every data key (and the check value) under the key `new` supplies, in one transaction;
        the old master key opens nothing afterwards. Returns how many data keys were re-wrapped; one that
        does not unwrap under the old key is kept as it is (its person's keys did not open before either)."""
        new_master = DataKey(new.get(create=True))
        old = self._wrapper()
        n = 0
        with self.db.transaction():
            for user_id, wrapped in self.db.fetch_tuples(sa.select(data_keys.c.user_id, data_keys.c.wrapped)):
                raw = old.open(bytes(wrapped), _wrap_context(user_id))
                if raw is None:
                    continue
                rewrapped = new_master.seal(raw, _wrap_context(user_id))
                self.db.execute(sa.update(data_keys).where(data_keys.c.user_id == user_id).values(wrapped=rewrapped))
                n += 1
            check = new_master.seal(_CHECK_PLAINTEXT, _CHECK_CONTEXT)
            self.db.execute(sa.update(keyring_check).where(keyring_check.c.id == 1).values(sealed=check))
        self._master, self.source = new_master, new
        return n

    def user_ids(self) -> set[str]:
        return {str(r[0]) for r in self.db.fetch_tuples(sa.select(data_keys.c.user_id))}

    def count(self) -> int:
        row = self.db.first(sa.select(sa.func.count().label("n")).select_from(data_keys))
        return int(row["n"]) if row else 0

    def close(self) -> None:
        if self.separate:
            self.db.close()
