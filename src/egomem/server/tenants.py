"""Tenants and API keys. A tenant is a home or a fleet: it has its own memory store,
so no query, index or cache can cross tenants — isolation by construction.

Keys are random 256-bit tokens shown once; only their SHA-256 is stored (a salted slow
hash buys nothing for keys with this much entropy, and lookups stay O(1)).
"""

from __future__ import annotations

import hashlib
import re
import secrets
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from egomem.config import Config
from egomem.errors import InputError, NotFoundError
from egomem.store import MemoryStore, open_store

_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")


@dataclass(frozen=True)
class Tenant:
    id: str
    created_at: float


@dataclass(frozen=True)
class KeyInfo:
    """An issued key as it can be shown later: never the key, only an id from its hash."""

    key_id: str
    tenant_id: str
    label: str
    created_at: float


KEY_ID_LEN = 12  # hex digits of the key's SHA-256: names a key without revealing it
# What a key grants, shown with it: a key is the tenant's whole authority (there are no scopes).
KEY_GRANTS = (
    "full read and write access to tenant {tenant}'s memory: people, facts, relations, episodes and "
    "their deletion (REST /api/v1), device streams (/api/v1/stream), the inspector and MCP"
)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def key_id(key: str) -> str:
    return hash_key(key)[:KEY_ID_LEN]


class TenantRegistry:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.root = config.data_dir / "tenants"
        self.root.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(config.data_dir / "server.db"), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS tenants (id TEXT PRIMARY KEY, created_at REAL NOT NULL)")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS api_keys (hash TEXT PRIMARY KEY, tenant_id TEXT NOT NULL"
            " REFERENCES tenants (id) ON DELETE CASCADE, label TEXT NOT NULL DEFAULT '', created_at REAL NOT NULL)"
        )
        self._lock = threading.Lock()
        self._stores: dict[str, MemoryStore] = {}

    def create(self, tenant_id: str, label: str = "") -> tuple[Tenant, str]:
        """A new tenant and its first API key (returned once, never stored)."""
        if not _NAME_RE.match(tenant_id):
            raise InputError("a tenant id is 1-63 lower-case letters, digits, '-' or '_'")
        with self._lock:
            if self._db.execute("SELECT 1 FROM tenants WHERE id = ?", (tenant_id,)).fetchone():
                raise InputError(f"tenant {tenant_id!r} exists already")
            self._db.execute("INSERT INTO tenants (id, created_at) VALUES (?, ?)", (tenant_id, time.time()))
        return Tenant(tenant_id, time.time()), self.new_key(tenant_id, label)

    def new_key(self, tenant_id: str, label: str = "") -> str:
        key = "egm_" + secrets.token_urlsafe(32)
        with self._lock:
            if not self._db.execute("SELECT 1 FROM tenants WHERE id = ?", (tenant_id,)).fetchone():
                raise NotFoundError(f"unknown tenant {tenant_id!r}")
            self._db.execute(
                "INSERT INTO api_keys (hash, tenant_id, label, created_at) VALUES (?, ?, ?, ?)",
                (hash_key(key), tenant_id, label, time.time()),
            )
        return key

    def keys(self, tenant_id: str | None = None) -> list[KeyInfo]:
        """The issued keys (of one tenant, or all), oldest first."""
        sql = "SELECT hash, tenant_id, label, created_at FROM api_keys"
        args: tuple[str, ...] = ()
        if tenant_id is not None:
            self._require(tenant_id)
            sql, args = sql + " WHERE tenant_id = ?", (tenant_id,)
        with self._lock:
            rows = self._db.execute(sql + " ORDER BY created_at, hash", args).fetchall()
        return [KeyInfo(r[0][:KEY_ID_LEN], r[1], r[2], r[3]) for r in rows]

    def revoke(self, tenant_id: str, key_or_id: str) -> KeyInfo:
        """Revoke one key of the tenant, named by its key id (or a longer prefix of its hash) or by
        the key itself; it stops working for new requests and connections at once."""
        self._require(tenant_id)
        ref = key_or_id.strip()
        if ref.startswith("egm_"):
            ref = hash_key(ref)
        if len(ref) < 6 or not re.fullmatch(r"[0-9a-f]+", ref):
            raise InputError(f"{key_or_id!r} is neither a key id (see `egomem tenants list`) nor a key")
        with self._lock:
            rows = self._db.execute(
                "SELECT hash, label, created_at FROM api_keys WHERE tenant_id = ? AND substr(hash, 1, ?) = ?",
                (tenant_id, len(ref), ref),
            ).fetchall()
            if len(rows) != 1:
                raise (NotFoundError if not rows else InputError)(
                    f"{'no' if not rows else 'more than one'} key of tenant {tenant_id!r} matches {key_or_id!r}"
                )
            self._db.execute("DELETE FROM api_keys WHERE hash = ?", (rows[0][0],))
        return KeyInfo(rows[0][0][:KEY_ID_LEN], tenant_id, rows[0][1], rows[0][2])

    def rotate(self, tenant_id: str, label: str = "") -> tuple[str, list[KeyInfo]]:
        """A new key for the tenant and every older key revoked, in one transaction: the new key
        (shown once) and the revoked ones."""
        self._require(tenant_id)
        key = "egm_" + secrets.token_urlsafe(32)
        with self._lock:
            old = self._db.execute(
                "SELECT hash, label, created_at FROM api_keys WHERE tenant_id = ?", (tenant_id,)
            ).fetchall()
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute("DELETE FROM api_keys WHERE tenant_id = ?", (tenant_id,))
                self._db.execute(
                    "INSERT INTO api_keys (hash, tenant_id, label, created_at) VALUES (?, ?, ?, ?)",
                    (hash_key(key), tenant_id, label, time.time()),
                )
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        return key, [KeyInfo(h[:KEY_ID_LEN], tenant_id, lab, at) for h, lab, at in old]

    def _require(self, tenant_id: str) -> None:
        with self._lock:
            if not self._db.execute("SELECT 1 FROM tenants WHERE id = ?", (tenant_id,)).fetchone():
                raise NotFoundError(f"unknown tenant {tenant_id!r}")

    def authenticate(self, key: str | None) -> str | None:
        """The tenant id a key belongs to, or None."""
        if not key:
            return None
        with self._lock:
            row = self._db.execute("SELECT tenant_id FROM api_keys WHERE hash = ?", (hash_key(key),)).fetchone()
        return None if row is None else str(row[0])

    def list(self) -> list[Tenant]:
        with self._lock:
            rows = self._db.execute("SELECT id, created_at FROM tenants ORDER BY id").fetchall()
        return [Tenant(r[0], r[1]) for r in rows]

    def store(self, tenant_id: str) -> MemoryStore:
        """The tenant's own store (opened once, shared by its requests and sessions)."""
        with self._lock:
            s = self._stores.get(tenant_id)
            if s is None:
                cfg = self.config.model_copy(update={"data_dir": self.tenant_dir(tenant_id)})
                s = self._stores[tenant_id] = open_store(cfg)
            return s

    def tenant_dir(self, tenant_id: str) -> Path:
        return self.root / tenant_id

    def close(self) -> None:
        with self._lock:
            for s in self._stores.values():
                s.close()
            self._stores.clear()
            self._db.close()
