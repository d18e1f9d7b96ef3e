"""Privacy REST: forget a topic, consent events, sensitivity override (docs/privacy.md)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from egomem.config import load_config
from egomem.schemas import ConsentEvent, Fact
from egomem.server.app import create_app
from egomem.server.tenants import TenantRegistry


@pytest.fixture
def service(tmp_path: Path) -> Iterator[tuple[TestClient, TenantRegistry, str]]:
    cfg = load_config(data_dir=tmp_path, environ={})
    reg = TenantRegistry(cfg)
    _, key = reg.create("home")
    with TestClient(create_app(cfg, reg)) as client:
        yield client, reg, key
    reg.close()


def test_forget_topic_consent_and_sensitivity(service: tuple[TestClient, TenantRegistry, str]) -> None:
    client, reg, key = service
    auth = {"Authorization": f"Bearer {key}"}
    store = reg.store("home")
    anna = store.create_user("Anna")
    old = store.add_fact(Fact(user_id=anna.id, text="sister's wedding is in May"))
    store.supersede_fact(old.id, Fact(user_id=anna.id, text="sister's wedding moved to June"))
    tennis = store.add_fact(Fact(user_id=anna.id, text="plays tennis"))
    store.record_consent(ConsentEvent(user_id=anna.id, kind="consent", policy="ask", evidence="yes, sure"))

    r = client.post(f"/api/v1/users/{anna.id}/forget", json={"topic": "sister's wedding"}, headers=auth)
    assert r.status_code == 200 and r.json()["facts"] == 2
    assert [f.id for f in store.list_facts(anna.id, include_history=True)] == [tennis.id]
    assert client.post("/api/v1/users/u_nobody/forget", json={"topic": "x"}, headers=auth).status_code == 404
    assert client.post(f"/api/v1/users/{anna.id}/forget", json={"topic": ""}, headers=auth).status_code == 422

    events = client.get(f"/api/v1/users/{anna.id}/consent", headers=auth).json()
    assert [(e["kind"], e["evidence"]) for e in events] == [("consent", "yes, sure")]
    assert client.get(f"/api/v1/users/{anna.id}/export", headers=auth).json()["consent"][0]["kind"] == "consent"

    r = client.put(f"/api/v1/facts/{tennis.id}/sensitivity", json={"sensitivity": "private"}, headers=auth)
    assert r.status_code == 200 and store.get_fact(tennis.id).sensitivity == "private"
    bad = client.put(f"/api/v1/facts/{tennis.id}/sensitivity", json={"sensitivity": "secret"}, headers=auth)
    assert bad.status_code == 422 and store.get_fact(tennis.id).sensitivity == "private"
