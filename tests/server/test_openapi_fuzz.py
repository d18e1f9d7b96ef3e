"""Schemathesis against the admin API's OpenAPI spec: generated requests (valid and not)
never make the server fail (no 5xx), and memory stays readable afterwards."""

from __future__ import annotations

import tempfile

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from egomem.config import load_config
from egomem.retrieval.encoder import default_encoder
from egomem.schemas import Fact
from egomem.server.app import create_app
from egomem.server.tenants import TenantRegistry

# POST /api/v1/ask answers without the local LLM here (minutes per answer on CPU); the route is fuzzed all the same.
_cfg = load_config(data_dir=tempfile.mkdtemp(prefix="egomem-fuzz-"), environ={"EGOMEM_ASK__LLM": "false"})
_registry = TenantRegistry(_cfg)
_, KEY = _registry.create("fuzz")
_store = _registry.store("fuzz")
_user = _store.create_user("Emily")
_store.add_fact(Fact(user_id=_user.id, text="loves hiking"))
app = create_app(_cfg, _registry)
default_encoder().encode(["warm-up"])  # loaded once here, not inside a fuzz case's 10 s read timeout
schema = schemathesis.openapi.from_asgi("/openapi.json", app)
CALLS: list[tuple[str, int]] = []


@schema.parametrize()
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_errors(case: schemathesis.Case) -> None:
    response = case.call(headers={"Authorization": f"Bearer {KEY}"})
    CALLS.append((case.method, response.status_code))
    case.validate_response(response, checks=[not_a_server_error])


def test_memory_still_readable_after_fuzzing() -> None:
    # Runs after the fuzz cases (file order): they really sent requests, of several outcomes.
    assert len(CALLS) >= 50 and len({status for _, status in CALLS}) >= 3
    users = _store.list_users()
    assert all(u.id for u in users)
    for u in users:
        _store.list_facts(u.id, include_history=True)
        _store.list_relations(u.id)
