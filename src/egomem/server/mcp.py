"""`egomem mcp`: memory as an MCP server (the official `mcp` SDK), for agent frameworks.

Tools: `ask` (a question, answered from memory with its evidence: retrieval/ask.py),
`search` (the product's search over facts and episode turns), `remember` (a fact about a
person, through the memory update agent: memory/remember.py) and `list_people`.

Tenants and keys are the REST API's. Over streamable HTTP (`--transport http`, path
`/mcp`) every request carries the tenant's API key (`Authorization: Bearer KEY` or
`X-API-Key`); a request without a valid key is answered 401 before MCP sees it. Over
stdio the key comes from `--key` / `EGOMEM_API_KEY`; without one, the tools use the local
store of `--data-dir`, the one `egomem ask` reads.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Mapping
from typing import Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import ValidationError
from starlette.types import ASGIApp, Receive, Scope, Send

from egomem import __version__
from egomem.config import Config
from egomem.errors import EgomemError, InputError
from egomem.memory.remember import remember_fact
from egomem.retrieval.dense import EmbeddingCache
from egomem.retrieval.encoder import default_encoder
from egomem.retrieval.search import search as run_search
from egomem.retrieval.search_config import DEFAULT, SearchFilters
from egomem.server.ask_api import AskRequest, answer_question, process_llm, shared_llm
from egomem.server.deps import TenantContext, api_key_of
from egomem.server.tenants import TenantRegistry
from egomem.store import open_store

INSTRUCTIONS = (
    "Long-term memory of people (who they are, what they said, what they like, how they are related). "
    "Use `ask` for questions ('what does my sister like?', 'what did Anna say last Tuesday?'): it returns "
    "an answer and the evidence with sources. `search` returns raw matches; `remember` stores a fact about "
    "a person; `list_people` lists who memory knows."
)


LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
# stderr is the MCP client's log pane: warnings and errors only unless asked (--log-level).
DEFAULT_LOG_LEVEL: LogLevel = "WARNING"


def _one_line(exc: Exception) -> str:
    """A tool error in one line: a pydantic error names the field and the problem, not a dump."""
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        field = ".".join(str(x) for x in first["loc"]) or "input"
        return f"{field}: {first['msg']}"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _configure_logging(level: LogLevel) -> None:
    """Plain one-line records on stderr at `level` (the SDK would otherwise set up a rich handler at
    INFO, wrapping each record over several lines); a no-op when logging is configured already."""
    logging.basicConfig(level=level, format="%(message)s", stream=sys.stderr)


class MemoryAccess:
    """Which tenant's memory a tool call reaches: one fixed store (stdio), or the tenant of
    the request's API key (HTTP)."""

    def __init__(self, config: Config, registry: TenantRegistry | None = None, fixed: TenantContext | None = None):
        if (registry is None) == (fixed is None):
            raise ValueError("give a tenant registry or a fixed context")
        self.config = config
        self.registry = registry
        self.fixed = fixed
        self._contexts: dict[str, TenantContext] = {}
        self._lock = threading.Lock()

    @classmethod
    def for_stdio(cls, config: Config, key: str | None) -> MemoryAccess:
        if not key:
            return cls(config, fixed=TenantContext("local", open_store(config)))
        registry = TenantRegistry(config)
        tenant = registry.authenticate(key)
        if tenant is None:
            registry.close()
            raise InputError("the API key (--key / EGOMEM_API_KEY) belongs to no tenant")
        return cls(config, fixed=TenantContext(tenant, registry.store(tenant)))

    def context(self, headers: Mapping[str, str] | None) -> TenantContext:
        if self.fixed is not None:
            return self.fixed
        assert self.registry is not None
        tenant = self.registry.authenticate(api_key_of(headers or {}))
        if tenant is None:
            raise ToolError("missing or invalid API key")
        with self._lock:
            ctx = self._contexts.get(tenant)
            if ctx is None:
                ctx = self._contexts[tenant] = TenantContext(tenant, self.registry.store(tenant))
            return ctx

    def close(self) -> None:
        if self.fixed is not None:
            self.fixed.store.close()
        if self.registry is not None:
            self.registry.close()


def _headers(ctx: Context) -> Mapping[str, str] | None:
    try:
        return ctx.headers
    except ValueError:  # no request (in-process calls outside a transport)
        return None


def build_server(access: MemoryAccess, log_level: LogLevel = DEFAULT_LOG_LEVEL) -> MCPServer:
    config = access.config
    server: MCPServer = MCPServer("egomem", instructions=INSTRUCTIONS, version=__version__, log_level=log_level)

    def tenant(ctx: Context) -> TenantContext:
        return access.context(_headers(ctx))

    def cache(tc: TenantContext) -> EmbeddingCache:
        return tc.cache(lambda: EmbeddingCache(default_encoder()))

    @server.tool()
    def ask(
        question: str, ctx: Context, user_id: str | None = None, as_of: str | None = None, use_llm: bool = True
    ) -> dict[str, Any]:
        """Answer a question from memory. Returns the answer, `answered_by` ("llm:<provider>" or
        "evidence" when no language model answered), the evidence items with their sources
        (episode id, time, quoted words, fact id), and notes. `user_id`: who asks (resolves
        "my sister", "I"). `as_of`: only memory from before this ISO 8601 time."""
        tc = tenant(ctx)
        if not question.strip():
            raise ToolError("the question is empty")
        try:
            body = AskRequest(question=question, user_id=user_id, as_of=as_of, llm=use_llm)
            llm = shared_llm(access, config) if use_llm and config.ask.llm else None
            return answer_question(config, tc, body, llm).model_dump(mode="json")
        except (EgomemError, ValueError) as exc:
            raise ToolError(_one_line(exc)) from exc

    @server.tool()
    def search(query: str, ctx: Context, user_id: str | None = None, limit: int = 10) -> dict[str, Any]:
        """Search memory once (no rounds, no answer): facts of `user_id` (when given) and turns of
        stored episodes matching `query`, best first."""
        tc = tenant(ctx)
        if not query.strip() or not 1 <= limit <= 50:
            raise ToolError("give a non-empty query and a limit of 1-50")
        try:
            if user_id is not None:
                tc.store.get_user(user_id)
            found = run_search(
                tc.store, query, cache(tc), DEFAULT.model_copy(update={"limit": limit}), SearchFilters(user_id=user_id)
            )
        except EgomemError as exc:
            raise ToolError(str(exc)) from exc
        return {
            "facts": [
                {"fact_id": h.fact.id, "user_id": h.fact.user_id, "text": h.fact.text, "score": h.score}
                for h in found.facts
            ],
            "turns": [
                {
                    "episode_id": h.episode.id,
                    "turn_index": h.turn_index,
                    "speaker": h.speaker,
                    "text": h.text,
                    "time": h.episode.start,
                    "score": h.score,
                }
                for h in found.turns
            ],
        }

    @server.tool()
    def remember(person: str, fact: str, ctx: Context, kind: str = "fact") -> dict[str, Any]:
        """Remember a fact about a person (a user id or a name; an unknown name becomes a new
        person). The memory update agent decides whether it is new, replaces an older fact
        (kept in history) or repeats one; `ops` says what was done."""
        tc = tenant(ctx)
        try:
            # The update agent: the process's one language model, unless `[memory] update_agent` is the rules.
            agent = None if config.memory.update_agent == "rules" else process_llm(access, config)
            done = remember_fact(
                tc.store, person, fact, cache(tc).encoder, config, kind=kind, source="mcp", provider=agent
            )
        except (EgomemError, ValueError) as exc:
            raise ToolError(_one_line(exc)) from exc
        return {
            "user_id": done.user.id,
            "name": done.user.name,
            "new_person": done.created_person,
            "episode_id": done.episode_id,
            "ops": [{"op": op, "fact_id": fid, "text": text} for op, fid, text in done.ops],
        }

    @server.tool()
    def list_people(ctx: Context, include_placeholders: bool = True) -> dict[str, Any]:
        """Everyone memory knows: id, name, whether only talked about (placeholder), fact count."""
        tc = tenant(ctx)
        s = tc.store
        return {
            "people": [
                {
                    "user_id": u.id,
                    "name": u.name,
                    "placeholder": u.placeholder,
                    "facts": len(s.list_facts(u.id)),
                    "last_seen": u.last_seen,
                }
                for u in s.list_users(include_placeholders=include_placeholders)
            ]
        }

    return server


class RequireKey:
    """ASGI middleware: HTTP requests without a valid tenant API key get 401."""

    def __init__(self, app: ASGIApp, registry: TenantRegistry) -> None:
        self.app = app
        self.registry = registry

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
            if self.registry.authenticate(api_key_of(headers)) is None:
                body = b'{"detail":"missing or invalid API key"}'
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def http_app(config: Config, registry: TenantRegistry | None = None) -> tuple[ASGIApp, MemoryAccess]:
    """The streamable-HTTP MCP app (path /mcp) behind the API-key check."""
    registry = registry or TenantRegistry(config)
    access = MemoryAccess(config, registry=registry)
    app = build_server(access).streamable_http_app(streamable_http_path="/mcp", host=config.server.host)
    return RequireKey(app, registry), access


def run_stdio(config: Config, key: str | None, log_level: LogLevel = DEFAULT_LOG_LEVEL) -> None:
    _configure_logging(log_level)
    access = MemoryAccess.for_stdio(config, key)
    try:
        build_server(access, log_level).run("stdio")
    finally:
        access.close()


def run_http(config: Config, host: str, port: int, log_level: LogLevel = DEFAULT_LOG_LEVEL) -> None:
    from egomem.server.serve import serve

    _configure_logging(log_level)
    built: list[MemoryAccess] = []

    def make_app() -> ASGIApp:
        app, access = http_app(config)
        built.append(access)
        return app

    try:
        serve(make_app, host, port, log_level="info")  # a busy port: one line; keys redacted from the log
    finally:
        for access in built:
            access.close()
