"""The egomem service: admin REST API, device WebSocket sessions, web inspector, metrics.

    egomem serve --host 127.0.0.1 --port 8765

Binds to loopback by default; put it behind a TLS proxy to expose it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint

from egomem import __version__
from egomem.config import Config
from egomem.errors import EgomemError, InputError, NotFoundError
from egomem.runtime.build import Models
from egomem.server import queue_api
from egomem.server.admin import router as admin_router
from egomem.server.ask_api import router as ask_router
from egomem.server.docs import mount_docs
from egomem.server.metrics import Metrics
from egomem.server.refiners import TenantRefiners
from egomem.server.session import router as stream_router
from egomem.server.sleep import TenantSleep
from egomem.server.tenants import TenantRegistry

STATIC = Path(__file__).parent / "static"
MAX_BODY_BYTES = 1 << 20  # REST bodies; media goes over the WebSocket


class BodyLimit(BaseHTTPMiddleware):
    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY_BYTES):
            return JSONResponse({"detail": f"request body over {MAX_BODY_BYTES} bytes"}, status_code=413)
        return await call_next(request)


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    app.state.sleep.start()  # sleep-time work per tenant, on its schedule (server/sleep.py)
    try:
        yield
    finally:
        await asyncio.to_thread(app.state.sleep.stop)
        await asyncio.to_thread(app.state.refiners.stop)


def create_app(config: Config, registry: TenantRegistry | None = None) -> FastAPI:
    app = FastAPI(
        lifespan=_lifespan,
        title="egomem",
        version=__version__,
        description="Lifelong memory of people, as a service.",
        docs_url=None,  # /docs from local files (server/docs.py); ReDoc would need a CDN
        redoc_url=None,
    )
    mount_docs(app)
    app.state.config = config
    app.state.tenants = registry or TenantRegistry(config)
    app.state.contexts = {}
    app.state.watchers = {}  # tenant -> outboxes of live inspector views
    app.state.lock = threading.Lock()
    app.state.services = {}  # tenant -> Services (runtime.services), built on a device's first session
    app.state.metrics = metrics = Metrics()
    metrics.describe("egomem_http_requests_total", "counter", "HTTP requests by route and status")
    metrics.describe("egomem_memory_errors_total", "counter", "requests refused by the memory store")
    app.add_middleware(BodyLimit)

    @app.middleware("http")
    async def count(request: Request, call_next: RequestResponseEndpoint) -> Response:
        response = await call_next(request)
        route = request.scope.get("route")
        metrics.inc(
            "egomem_http_requests_total", path=getattr(route, "path", "unmatched"), status=str(response.status_code)
        )
        return response

    @app.exception_handler(NotFoundError)
    async def not_found(_: Request, exc: NotFoundError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=404)

    @app.exception_handler(InputError)
    async def bad_input(_: Request, exc: InputError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=422)

    @app.exception_handler(EgomemError)
    async def refused(_: Request, exc: EgomemError) -> JSONResponse:
        metrics.inc("egomem_memory_errors_total")
        return JSONResponse({"detail": str(exc)}, status_code=409)

    @app.get("/health", tags=["service"])
    def health() -> dict[str, str]:
        return {"status": "ok", "version": __version__}

    queue_api.describe(metrics)

    @app.get("/metrics", tags=["service"], response_class=PlainTextResponse)
    def prometheus() -> str:
        queue_api.update(metrics, app.state.contexts)
        return metrics.render()

    @app.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse("/inspector/")

    app.state.models = Models(config)  # loaded lazily, shared by every device session
    app.state.refiners = TenantRefiners()  # the model's passes after the rules' writes, one worker per tenant
    app.state.sleep = TenantSleep(config, app.state.tenants, lambda: app.state.models.text)
    metrics.describe("egomem_sessions_total", "counter", "device stream sessions opened")
    app.include_router(admin_router)
    app.include_router(ask_router)
    app.include_router(queue_api.router)
    app.include_router(stream_router)
    if STATIC.is_dir():
        app.mount("/inspector", StaticFiles(directory=STATIC, html=True), name="inspector")
    return app
