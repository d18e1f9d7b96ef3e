"""The model's passes in `egomem serve`: a device's `done` comes once the rules' first writes are in,
and the tenant's own worker runs the language model's pass after it (server/refiners.py); the
stream's pace is the device's to say, and a pace the server does not know is one clear error."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from egomem.config import load_config
from egomem.llm.base import LLMProvider, T
from egomem.memory.rules_provider import RulesProvider
from egomem.runtime.demo import ASSETS
from egomem.server.app import create_app
from egomem.server.client import stream_recording
from egomem.server.refiners import TenantRefiners
from egomem.server.tenants import TenantRegistry
from egomem.store.base import REFINE_SUFFIX
from egomem.stream.sources import read_recording

from .conftest import live_app


class SlowModelMock(LLMProvider):
    """Plumbing mock of a language model (not a model): the rules' answers, after a pause, so that a
    `done` that waited for the model's pass would show in the timing. Counts its extractions."""

    name = "slow-model-mock"

    def __init__(self, pause_s: float) -> None:
        super().__init__()
        self.pause_s, self.extractions = pause_s, 0
        self.rules = RulesProvider()

    def run(self, task: str, payload: BaseModel, schema: type[T]) -> T:
        if task == "extract":
            self.extractions += 1
            time.sleep(self.pause_s)
        return self.rules.run(task, payload, schema)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, TenantRegistry, SlowModelMock]]:
    env = {"EGOMEM_PRIVACY__CONSENT": "implicit"}  # the demo's people are the test's own
    cfg = load_config(data_dir=tmp_path_factory.mktemp("refine"), environ=env)
    assert cfg.memory.model_pass == "after"  # the default under test
    reg = TenantRegistry(cfg)
    _, key = reg.create("home")
    app = create_app(cfg, reg)
    model = SlowModelMock(pause_s=4.0)
    app.state.llm = model  # the process's one language model (server/ask_api.py process_llm)
    app.state.models.load_all()
    with live_app(app) as port:
        yield f"ws://127.0.0.1:{port}", key, reg, model
    reg.close()


def test_done_comes_after_the_first_writes_and_the_tenants_worker_refines(
    served: tuple[str, str, TenantRegistry, SlowModelMock],
) -> None:
    url, key, reg, model = served
    # Sent as fast as the server takes it, but live: the server holds nothing up for memory.
    events = stream_recording(url, key, read_recording(ASSETS / "day1.mp4"), realtime=False, pace="live")
    assert events[-1]["type"] == "done" and events[-1]["sessions"] == 2
    store = reg.store("home")
    refine_keys = [j.key for j in store.list_jobs() if j.key.endswith(REFINE_SUFFIX)]
    first_keys = [j.key for j in store.list_jobs() if not j.key.endswith(REFINE_SUFFIX)]
    assert len(first_keys) == 2 and all(store.job(k).status == "done" for k in first_keys)
    assert len(refine_keys) == 2  # one model pass per session, committed with its first write
    # `done` did not wait for the model: the last session's pass (4 s of "model") is not written yet.
    assert any(store.job(k).status != "done" for k in refine_keys)
    deadline = time.time() + 120
    while time.time() < deadline and any(store.job(k).status != "done" for k in refine_keys):
        time.sleep(0.5)
    assert all(store.job(k).status == "done" for k in refine_keys) and model.extractions == 2
    assert {u.name for u in store.list_users(include_placeholders=False)} == {"Emily", "John"}


def test_a_pace_the_server_does_not_know_is_one_clear_error(
    served: tuple[str, str, TenantRegistry, SlowModelMock], tmp_path: Path
) -> None:
    from websockets.sync.client import connect

    url, key, _, _ = served
    with connect(f"{url}/api/v1/stream?pace=turbo", additional_headers={"Authorization": f"Bearer {key}"}) as ws:
        first = json.loads(ws.recv(timeout=30))
    assert first == {"type": "error", "message": "pace must be one of live, replay; got 'turbo'"}


def test_the_tenant_workers_wait_while_any_live_device_is_behind() -> None:
    refiners = TenantRefiners()
    late = {"a": False, "b": False}
    assert not refiners.behind()  # no device streaming
    with refiners.device(lambda: late["a"]), refiners.device(lambda: late["b"]):
        assert not refiners.behind()
        late["b"] = True  # one device late (of any tenant: they share the CPU) holds back every pass
        assert refiners.behind()
    assert not refiners.behind()  # gone with its stream, late or not
