"""`POST /api/v1/ask` and the MCP server (`egomem mcp`), through real clients: FastAPI's
TestClient with API keys, and the `mcp` SDK's own `Client` (in-process, over streamable
HTTP with a key, and over stdio spawning `egomem mcp`)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastapi.testclient import TestClient
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from egomem.config import Config, load_config
from egomem.schemas import Fact, Relation
from egomem.server.app import create_app
from egomem.server.deps import TenantContext
from egomem.server.mcp import MemoryAccess, build_server, http_app
from egomem.server.tenants import TenantRegistry
from egomem.store.base import MemoryStore

from .conftest import live_app


def _home(store: MemoryStore) -> dict[str, str]:
    tom = store.create_user("Tom").id
    anna = store.create_user("Anna").id
    store.add_relation(Relation(subject_id=tom, relation="sister", object_id=anna))
    store.add_fact(Fact(user_id=anna, text="likes green tea"))
    return {"tom": tom, "anna": anna}


@pytest.fixture
def service(tmp_path: Path) -> Iterator[tuple[Config, TenantRegistry, str, dict[str, str]]]:
    cfg = load_config(data_dir=tmp_path, environ={"EGOMEM_LLM__PROVIDER": "rules"})
    reg = TenantRegistry(cfg)
    _, key = reg.create("home")
    ids = _home(reg.store("home"))
    yield cfg, reg, key, ids
    reg.close()


def test_rest_ask_needs_a_key_and_answers_from_the_tenant(
    service: tuple[Config, TenantRegistry, str, dict[str, str]],
) -> None:
    cfg, reg, key, ids = service
    _, other = reg.create("other")
    with TestClient(create_app(cfg, reg)) as client:
        body = {"question": "What does my sister like?", "user_id": ids["tom"]}
        assert client.post("/api/v1/ask", json=body).status_code == 401
        assert client.post("/api/v1/ask", json=body, headers={"X-API-Key": "egm_wrong"}).status_code == 401
        r = client.post("/api/v1/ask", json=body, headers={"Authorization": f"Bearer {key}"})
        assert r.status_code == 200, r.text
        res = r.json()
        assert not res["empty"] and res["answered_by"] == "evidence"
        assert res["evidence"][0]["quote"] == "likes green tea" and res["evidence"][0]["person_id"] == ids["anna"]
        # another tenant's memory is empty: the defined empty answer, not tom's data
        r = client.post("/api/v1/ask", json={"question": "What does Anna like?"}, headers={"X-API-Key": other})
        assert r.status_code == 200 and r.json()["empty"] and r.json()["answer"].startswith("I have nothing about")
        bad = client.post("/api/v1/ask", json={"question": "x", "as_of": "soon-ish"}, headers={"X-API-Key": key})
        assert bad.status_code == 422 and "--as-of" in bad.json()["detail"]
        assert client.post("/api/v1/ask", json={"question": ""}, headers={"X-API-Key": key}).status_code == 422


def _text(result: Any) -> dict[str, Any]:
    assert not result.is_error, result
    out: dict[str, Any] = result.structured_content
    return out


def test_mcp_tools_through_the_sdk_client(service: tuple[Config, TenantRegistry, str, dict[str, str]]) -> None:
    cfg, reg, _, ids = service
    store = reg.store("home")
    access = MemoryAccess(cfg, fixed=TenantContext("home", store))
    server = build_server(access)

    async def main() -> None:
        async with Client(server) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert names == {"ask", "search", "remember", "list_people"}
            people = _text(await client.call_tool("list_people", {}))["people"]
            assert {p["name"] for p in people} == {"Tom", "Anna"}
            done = _text(await client.call_tool("remember", {"person": "Anna", "fact": "is allergic to nuts"}))
            assert done["user_id"] == ids["anna"] and [o["op"] for o in done["ops"]] == ["ADD"]
            again = _text(await client.call_tool("remember", {"person": "Anna", "fact": "is allergic to nuts"}))
            assert [o["op"] for o in again["ops"]] == ["NOOP"]
            # A health fact is sensitive (docs/privacy.md): her brother asking gets it left out ...
            res = _text(
                await client.call_tool("ask", {"question": "What is my sister allergic to?", "user_id": ids["tom"]})
            )
            assert "is allergic to nuts" not in [e["quote"] for e in res["evidence"]]
            # ... while an ask with no asking person (the operator, an admin) sees it.
            res = _text(await client.call_tool("ask", {"question": "What is Anna allergic to?"}))
            assert res["evidence"][0]["quote"] == "is allergic to nuts" and res["answered_by"] == "evidence"
            hits = _text(await client.call_tool("search", {"query": "allergic", "user_id": ids["anna"]}))
            assert hits["facts"][0]["text"] == "is allergic to nuts"
            unknown = _text(await client.call_tool("ask", {"question": "What does Zorblax like?"}))
            assert unknown["empty"] and unknown["answer"] == "I have nothing about Zorblax."
            err = await client.call_tool("search", {"query": "tea", "user_id": "u_nobody"})
            assert err.is_error

    anyio.run(main)
    # provenance and history: the remembered fact points at its episode and its words, with a history row
    fact = next(f for f in store.list_facts(ids["anna"]) if f.text == "is allergic to nuts")
    assert fact.source_text == "is allergic to nuts" and store.get_episode(fact.source_episode or "").participants == [
        ids["anna"]
    ]
    assert any(h.entity_id == fact.id and h.cause.startswith("mcp remember") for h in store.history(ids["anna"]))


def test_mcp_over_http_needs_the_tenant_key(service: tuple[Config, TenantRegistry, str, dict[str, str]]) -> None:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    cfg, reg, key, ids = service
    app, _ = http_app(cfg, reg)
    with TestClient(app) as plain:  # type: ignore[arg-type]
        assert plain.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).status_code == 401
    live, _ = http_app(cfg, reg)  # a session manager runs once: a fresh app for the live server
    with live_app(live) as port:  # type: ignore[arg-type]

        async def main() -> None:
            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=120) as http:
                transport = streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)
                async with Client(transport) as client:  # type: ignore[arg-type]
                    people = _text(await client.call_tool("list_people", {}))["people"]
                    assert {p["user_id"] for p in people} == {ids["tom"], ids["anna"]}

        anyio.run(main)


def test_mcp_over_stdio_spawning_egomem_mcp(tmp_path: Path) -> None:
    from egomem.store.sqlite import SQLiteStore

    store = SQLiteStore(tmp_path / "memory.db")
    ids = _home(store)
    store.close()
    env = {**os.environ, "EGOMEM_DATA_DIR": str(tmp_path), "EGOMEM_LLM__PROVIDER": "rules", "HF_HUB_OFFLINE": "1"}
    env.pop("EGOMEM_API_KEY", None)
    egomem = Path(sys.executable).parent / "egomem"  # the installed console script
    params = StdioServerParameters(command=str(egomem), args=["--data-dir", str(tmp_path), "mcp"], env=env)

    async def main() -> None:
        async with Client(params, read_timeout_seconds=300) as client:
            res = _text(await client.call_tool("ask", {"question": "What does my sister like?", "user_id": ids["tom"]}))
            assert res["evidence"][0]["quote"] == "likes green tea"

    anyio.run(main)
