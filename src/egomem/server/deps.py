"""Request dependencies: who is calling (tenant from the API key) and their resources."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from fastapi import HTTPException, Request

from egomem.server.tenants import TenantRegistry
from egomem.store.base import MemoryStore

T = TypeVar("T")


@dataclass
class TenantContext:
    tenant_id: str
    store: MemoryStore
    _caches: dict[str, Any] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def cache(self, make: Callable[[], T]) -> T:
        """A per-tenant object (e.g. an embedding cache) created on first use."""
        key = getattr(make, "__qualname__", "default")
        with self._lock:
            if key not in self._caches:
                self._caches[key] = make()
            return self._caches[key]


def api_key_of(headers: Any, query: Any = None) -> str | None:
    auth = headers.get("authorization") or ""
    if auth.lower().startswith("bearer "):
        return str(auth[7:].strip())
    key = headers.get("x-api-key")
    if key:
        return str(key)
    return None if query is None else query.get("api_key")


def tenant_context(request: Request) -> TenantContext:
    registry: TenantRegistry = request.app.state.tenants
    tenant = registry.authenticate(api_key_of(request.headers))
    if tenant is None:
        raise HTTPException(status_code=401, detail="missing or invalid API key")
    contexts: dict[str, TenantContext] = request.app.state.contexts
    with request.app.state.lock:
        ctx = contexts.get(tenant)
        if ctx is None:
            ctx = contexts[tenant] = TenantContext(tenant, registry.store(tenant))
    return ctx
