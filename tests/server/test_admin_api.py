"""Admin REST API: auth, tenant isolation, CRUD with history, errors, OpenAPI."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from egomem.config import load_config
from egomem.schemas import Fact, Relation
from egomem.server.app import create_app
from egomem.server.tenants import TenantRegistry


@pytest.fixture
def service(tmp_path: Path) -> Iterator[tuple[TestClient, TenantRegistry, dict[str, str]]]:
    cfg = load_config(data_dir=tmp_path, environ={})
    reg = TenantRegistry(cfg)
    _, key_a = reg.create("home-a")
    _, key_b = reg.create("home-b")
    with TestClient(create_app(cfg, reg)) as client:
        yield client, reg, {"a": key_a, "b": key_b}
    reg.close()


def h(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_health_metrics_and_openapi(service: tuple[TestClient, TenantRegistry, dict[str, str]]) -> None:
    client, _, _ = service
    assert client.get("/health").json()["status"] == "ok"
    spec = client.get("/openapi.json").json()
    assert spec["openapi"].startswith("3.") and "/api/v1/users/{user_id}/facts" in spec["paths"]
    client.get("/api/v1/users")  # a 401, counted
    text = client.get("/metrics").text
    assert 'egomem_http_requests_total{path="/api/v1/users",status="401"} 1.0' in text


def test_auth_required_and_keys_hashed_at_rest(
    service: tuple[TestClient, TenantRegistry, dict[str, str]], tmp_path: Path
) -> None:
    client, _, keys = service
    assert client.get("/api/v1/users").status_code == 401
    assert client.get("/api/v1/users", headers=h("egm_wrong")).status_code == 401
    assert client.get("/api/v1/users", headers={"X-API-Key": keys["a"]}).status_code == 200
    raw = (tmp_path / "server.db").read_bytes()
    assert keys["a"].encode() not in raw and keys["b"].encode() not in raw


def test_crud_with_history(service: tuple[TestClient, TenantRegistry, dict[str, str]]) -> None:
    client, reg, keys = service
    store = reg.store("home-a")
    emily, john = store.create_user("Emily"), store.create_user("John")
    fact = store.add_fact(Fact(user_id=john.id, text="loves tennis"))
    store.add_relation(Relation(subject_id=john.id, relation="colleague", object_id=emily.id))
    a = h(keys["a"])
    users = client.get("/api/v1/users", headers=a).json()
    assert {u["user"]["name"] for u in users} == {"Emily", "John"}
    assert client.patch(f"/api/v1/users/{john.id}", json={"name": "Johnny"}, headers=a).json()["name"] == "Johnny"
    new = client.put(f"/api/v1/facts/{fact.id}", json={"text": "loves squash"}, headers=a).json()
    facts = client.get(f"/api/v1/users/{john.id}/facts", headers=a).json()
    assert [f["text"] for f in facts] == ["loves squash"]
    hist = client.get(f"/api/v1/users/{john.id}/facts?history=true", headers=a).json()
    assert {f["text"] for f in hist} == {"loves tennis", "loves squash"}
    assert client.delete(f"/api/v1/facts/{new['id']}", headers=a).status_code == 204
    added = client.post(f"/api/v1/users/{emily.id}/facts", json={"text": "is a nurse", "kind": "fact"}, headers=a)
    assert added.status_code == 201 and added.json()["source_text"] == "(api)"
    rels = client.get(f"/api/v1/users/{emily.id}/relations", headers=a).json()
    assert rels[0]["relation"] == "colleague"
    export = client.get(f"/api/v1/users/{emily.id}/export", headers=a).json()
    assert export["facts"][0]["text"] == "is a nurse"
    report = client.delete(f"/api/v1/users/{john.id}", headers=a).json()
    assert report["removed"]["relations"] == 1
    assert client.get(f"/api/v1/users/{john.id}", headers=a).status_code == 404


def test_tenants_are_isolated(service: tuple[TestClient, TenantRegistry, dict[str, str]]) -> None:
    client, reg, keys = service
    secret = reg.store("home-a").create_user("Secret Sam")
    reg.store("home-a").add_fact(Fact(user_id=secret.id, text="hides the key under the mat"))
    b = h(keys["b"])
    assert client.get("/api/v1/users", headers=b).json() == []
    for path in (f"/api/v1/users/{secret.id}", f"/api/v1/users/{secret.id}/facts", f"/api/v1/users/{secret.id}/export"):
        assert client.get(path, headers=b).status_code == 404
    assert client.delete(f"/api/v1/users/{secret.id}", headers=b).status_code == 404
    assert client.get("/api/v1/search", params={"q": "key under the mat"}, headers=b).json() == []
    assert reg.store("home-a").get_user(secret.id).name == "Secret Sam"


def test_bad_input_is_a_clear_http_error(service: tuple[TestClient, TenantRegistry, dict[str, str]]) -> None:
    client, reg, keys = service
    a = h(keys["a"])
    u = reg.store("home-a").create_user("Ana")
    assert client.patch(f"/api/v1/users/{u.id}", json={"name": ""}, headers=a).status_code == 422
    assert client.post(f"/api/v1/users/{u.id}/relations", json={"relation": "friend"}, headers=a).status_code == 422
    assert client.post(f"/api/v1/users/{u.id}/merge", json={"other_id": u.id}, headers=a).status_code == 409
    big = {"text": "x" * 2_000_000}
    assert client.post(f"/api/v1/users/{u.id}/facts", json=big, headers=a).status_code == 413
    evil = "Robert'); DROP TABLE users;-- 🙂 Zoë"
    assert client.patch(f"/api/v1/users/{u.id}", json={"name": evil}, headers=a).json()["name"] == evil
    assert [x["user"]["name"] for x in client.get("/api/v1/users", headers=a).json()] == [evil]


def test_search_facts_of_a_user(service: tuple[TestClient, TenantRegistry, dict[str, str]]) -> None:
    client, reg, keys = service
    s = reg.store("home-a")
    u = s.create_user("Emily")
    for text in ("loves hiking in the mountains", "works as a nurse", "allergic to peanuts"):
        s.add_fact(Fact(user_id=u.id, text=text))
    hits = client.get("/api/v1/search", params={"q": "which job", "user_id": u.id, "k": 1}, headers=h(keys["a"]))
    assert hits.status_code == 200 and hits.json()[0]["fact"]["text"] == "works as a nurse"
