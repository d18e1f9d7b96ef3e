"""`egomem serve` runs sleep-time work on a schedule, per tenant store: the app's lifespan starts
the schedule, an idle tenant's old summaries are folded and weak facts fade, a tenant whose
device is finishing a session is left alone, and another tenant's memory is its own."""

from __future__ import annotations

import time
from pathlib import Path

from fastapi.testclient import TestClient

from egomem.config import Config, load_config
from egomem.memory.consolidate import RUNNING_PREFIX
from egomem.memory.strength import DAY_S
from egomem.schemas import Fact, FactKind
from egomem.server.app import create_app
from egomem.server.tenants import TenantRegistry
from egomem.store.base import MemoryStore

T0 = time.time() - 200 * DAY_S


def fast_schedule(data_dir: Path) -> Config:
    # Tiny times so the schedule turns within the test: a pass every 0.2 s after 0.1 s of quiet.
    env = {
        "EGOMEM_MEMORY__SLEEP_INTERVAL_S": "0.2",
        "EGOMEM_MEMORY__SLEEP_IDLE_S": "0",
        "EGOMEM_MEMORY__KEEP_RECENT_SUMMARIES": "2",
        "EGOMEM_MEMORY__RETENTION_MIN_STRENGTH": "0.05",
        "EGOMEM_RUNTIME__SESSION_MERGE_GAP_S": "0",
        "EGOMEM_RUNTIME__SESSION_MARGIN_S": "0",
        "EGOMEM_RUNTIME__MEMORY_INTERVAL_S": "0.05",
        "EGOMEM_LLM__PROVIDER": "rules",
    }
    return load_config(data_dir=data_dir, environ=env)


def remember(store: MemoryStore) -> str:
    u = store.create_user("Ana")
    for d in range(5):
        text = f"On day {d}, Ana talked with the assistant. Ana: topic number {d}."
        store.add_fact(Fact(user_id=u.id, kind=FactKind.SUMMARY, text=text, valid_from=T0 + d * DAY_S))
    store.add_fact(Fact(user_id=u.id, text="went to a concert once", valid_from=T0, importance=0.0))
    return u.id


def wait_for(cond: object, timeout: float = 20.0) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if callable(cond) and cond():
            return True
        time.sleep(0.05)
    return False


def test_serve_consolidates_idle_tenants_on_a_schedule(tmp_path: Path) -> None:
    cfg = fast_schedule(tmp_path)
    reg = TenantRegistry(cfg)
    reg.create("home")
    reg.create("shop")
    home, shop = reg.store("home"), reg.store("shop")
    ana, other = remember(home), remember(shop)
    app = create_app(cfg, reg)
    shop_sleep = app.state.sleep.of("shop")
    finishing = shop_sleep.session()  # the shop's device is writing its last session
    finishing.__enter__()
    try:
        with TestClient(app):  # the lifespan starts the schedule
            home_sleep = app.state.sleep.of("home")
            assert wait_for(lambda: home_sleep.reports)
            assert shop_sleep.reports == []  # never while a session is open
            running = [s for s in home.list_facts(ana, kinds=[FactKind.SUMMARY]) if s.text.startswith(RUNNING_PREFIX)]
            assert len(running) == 1 and len(home.list_facts(ana, kinds=[FactKind.SUMMARY])) == 3
            assert [f.text for f in home.list_facts(ana, kinds=[FactKind.FACT])] == []  # faded
            assert len(shop.list_facts(other, kinds=[FactKind.SUMMARY])) == 5  # untouched
            finishing.__exit__(None, None, None)
            finishing = None
            assert wait_for(lambda: shop_sleep.reports)
            assert len(shop.list_facts(other, kinds=[FactKind.SUMMARY])) == 3
        assert app.state.sleep._thread is None  # the lifespan stopped it
    finally:
        if finishing is not None:
            finishing.__exit__(None, None, None)
        reg.close()
