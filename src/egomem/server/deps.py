"""Request dependencies: who is calling (tenant from the API key) and their resources."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from fastapi import HTTPException, Request, WebSocket

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


def api_key_of(headers: Any) -> str | None:
    """The key of `Authorization: Bearer <key>` or `X-API-Key: <key>`. Never a URL's query: a key
    there ends up in access logs, proxies and browser history."""
    auth = headers.get("authorization") or ""
    if auth.lower().startswith("bearer "):
        return str(auth[7:].strip())
    key = headers.get("x-api-key")
    return str(key) if key else None


AUTH_TIMEOUT_S = 10.0  # a WebSocket without a key header must send its auth message within this
URL_KEY_REFUSED = 'API keys go in the Authorization header or a first {"type": "auth", "key": ...} message, not the URL'


async def websocket_tenant(ws: WebSocket) -> str | None:
    """The tenant of a WebSocket, its connection accepted; None (and closed, code 1008) without one.

    The key comes from the Authorization / X-API-Key header (robots, `egomem client`) or, since a
    browser cannot set headers on a WebSocket, from a first text message `{"type": "auth", "key":
    "egm_..."}`, answered with `{"type": "auth", "tenant": ...}`. A key in the URL is refused.
    """
    registry = ws.app.state.tenants
    if "api_key" in ws.query_params:
        await ws.close(code=1008, reason=URL_KEY_REFUSED)
        return None
    key = api_key_of(ws.headers)
    if key is not None:
        tenant: str | None = registry.authenticate(key)
        if tenant is None:
            await ws.close(code=1008, reason="invalid API key")
            return None
        await ws.accept()
        return tenant
    await ws.accept()
    try:
        msg = await asyncio.wait_for(ws.receive(), AUTH_TIMEOUT_S)
    except TimeoutError:
        await ws.close(code=1008, reason=f"no API key header and no auth message in {AUTH_TIMEOUT_S:.0f} s")
        return None
    if msg["type"] == "websocket.disconnect":
        return None
    try:
        auth = json.loads(msg.get("text") or "")
    except ValueError:
        auth = None
    key = auth.get("key") if isinstance(auth, dict) and auth.get("type") == "auth" else None
    tenant = registry.authenticate(key) if isinstance(key, str) else None
    if tenant is None:
        await ws.close(code=1008, reason="missing or invalid API key")
        return None
    await ws.send_json({"type": "auth", "tenant": tenant})
    return tenant


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
