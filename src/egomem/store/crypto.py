"""Biometric keys encrypted at rest: AES-256-GCM under a per-person data key, the data keys wrapped
by one master key that a pluggable source supplies (a file, an environment variable, a KMS plugin).

What is sealed and how (docs/privacy.md, "Keys at rest", states the guarantee):
- a person's data key is 32 random bytes, made when their first identity key is stored;
- each identity key's float32 bytes are sealed as nonce (12 random bytes) || ciphertext || tag, with
  the person, modality and model as associated data, so a sealed key moved to another row or person
  does not open;
- the data key is stored wrapped (AES-GCM under the master key, the person's id as associated data)
  in the keyring (store/keyring.py), which destroys it when the person is purged (crypto-shredding).

A master key source returns 32 bytes. `register_master_key_source` adds one (a KMS client, an HSM):
`privacy.master_key = "<name>"` then selects it. The built-in ones: "file" (default; generated once,
mode 0600, when the store is new) and "env" (base64 or hex in an environment variable).
"""

from __future__ import annotations

import base64
import binascii
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from egomem.errors import ConfigError, StoreError

KEY_BYTES = 32  # AES-256
NONCE_BYTES = 12
TAG_BYTES = 16
SEAL_OVERHEAD = NONCE_BYTES + TAG_BYTES
MASTER_KEY_FILE = "master.key"
MASTER_KEY_ENV = "EGOMEM_MASTER_KEY"


class MasterKeyError(StoreError):
    """The master key is missing, malformed, or not the one this store's keyring was made with."""


class MasterKeySource(Protocol):
    """Supplies the 32-byte master key. `where` names the source in messages (never the key)."""

    where: str

    def get(self, *, create: bool) -> bytes:
        """The key; with create=True a source that can make one does so when it has none yet
        (a new store). Raises MasterKeyError when there is none (and create is False or impossible)."""
        ...


def parse_master_key(text: str, where: str) -> bytes:
    """32 bytes written as 64 hex digits or as base64 (standard or URL-safe)."""
    text = text.strip()
    raw: bytes | None = None
    if len(text) == 2 * KEY_BYTES:
        try:
            raw = bytes.fromhex(text)
        except ValueError:
            raw = None
    if raw is None:
        try:
            raw = base64.b64decode(text.replace("-", "+").replace("_", "/"), validate=True)
        except (binascii.Error, ValueError):
            raw = None
    if raw is None or len(raw) != KEY_BYTES:
        raise MasterKeyError(f"the master key in {where} is not 32 bytes written as 64 hex digits or base64")
    return raw


def new_master_key_text() -> str:
    return base64.b64encode(secrets.token_bytes(KEY_BYTES)).decode()


class KeyFile:
    """The master key in a file (base64), created once with mode 0600 when the store is new."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.where = f"the key file {self.path}"

    def get(self, *, create: bool) -> bytes:
        if not self.path.exists():
            if not create:
                raise MasterKeyError(
                    f"the master key file {self.path} is missing, and this store's keys were sealed with it:"
                    " restore the file (or set privacy.master_key_file to where it is); nothing was read"
                )
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:  # another process made it first: use theirs
                return self.get(create=False)
            except OSError as exc:
                raise MasterKeyError(f"cannot create the master key file {self.path}: {exc.strerror}") from exc
            with os.fdopen(fd, "w") as f:
                f.write(new_master_key_text() + "\n")
        try:
            text = self.path.read_text()
        except OSError as exc:
            raise MasterKeyError(f"cannot read the master key file {self.path}: {exc.strerror}") from exc
        return parse_master_key(text, self.where)


class KeyFromEnv:
    """The master key in an environment variable (base64 or hex); never created."""

    def __init__(self, variable: str = MASTER_KEY_ENV) -> None:
        self.variable = variable
        self.where = f"the environment variable {variable}"

    def get(self, *, create: bool) -> bytes:
        text = os.environ.get(self.variable, "")
        if not text.strip():
            raise MasterKeyError(
                f"privacy.master_key = 'env' but {self.variable} is not set"
                " (32 bytes as base64 or hex: `python -c 'import secrets,base64;"
                " print(base64.b64encode(secrets.token_bytes(32)).decode())'`)"
            )
        return parse_master_key(text, self.where)


class FixedKey:
    """A key held by the caller (tests, a KMS client that has already fetched it)."""

    def __init__(self, key: bytes, where: str = "a key given by the caller") -> None:
        if len(key) != KEY_BYTES:
            raise MasterKeyError(f"a master key is {KEY_BYTES} bytes, got {len(key)}")
        self.key, self.where = key, where

    def get(self, *, create: bool) -> bytes:
        return self.key


class EphemeralKey(FixedKey):
    """A random key that lives as long as the process: for in-memory stores, which end with it."""

    def __init__(self) -> None:
        super().__init__(secrets.token_bytes(KEY_BYTES), "a key made for this in-memory store")


# name -> factory(settings, data_dir): the sources `privacy.master_key` can name.
SourceFactory = Callable[[str | None, str, Path], MasterKeySource]
_SOURCES: dict[str, SourceFactory] = {
    "file": lambda file, env, data_dir: KeyFile(Path(file) if file else data_dir / MASTER_KEY_FILE),
    "env": lambda file, env, data_dir: KeyFromEnv(env),
}


def register_master_key_source(name: str, factory: SourceFactory) -> None:
    """Add a master key source (e.g. a KMS client): factory(master_key_file, master_key_env, data_dir)."""
    _SOURCES[name] = factory


def master_key_source(name: str, file: str | None, env: str, data_dir: Path) -> MasterKeySource:
    factory = _SOURCES.get(name)
    if factory is None:
        raise ConfigError(f"privacy.master_key = {name!r} is no master key source (known: {', '.join(_SOURCES)})")
    return factory(file, env, data_dir)


# -- sealing ------------------------------------------------------------------------------------------
def _aead(key: bytes) -> AESGCM:
    return AESGCM(key)


class DataKey:
    """One person's data key, ready to seal and open their identity keys."""

    __slots__ = ("_aead",)

    def __init__(self, key: bytes) -> None:
        self._aead = _aead(key)

    def seal(self, plaintext: bytes, context: bytes) -> bytes:
        nonce = secrets.token_bytes(NONCE_BYTES)
        return nonce + self._aead.encrypt(nonce, plaintext, context)

    def open(self, sealed: bytes, context: bytes) -> bytes | None:
        """The plaintext, or None when the bytes were altered or sealed under another key or context."""
        if len(sealed) < SEAL_OVERHEAD:
            return None
        try:
            return self._aead.decrypt(sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], context)
        except InvalidTag:
            return None


def key_context(user_id: str, modality: str, model: str) -> bytes:
    """Associated data of a sealed identity key: whose, which modality, which encoder."""
    return f"egomem-key/1\x00{user_id}\x00{modality}\x00{model}".encode()
