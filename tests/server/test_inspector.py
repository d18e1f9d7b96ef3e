"""The web inspector, end to end in headless Chromium (Debian's, no browser download).

A real uvicorn server on 127.0.0.1 serves the app; Playwright drives /usr/bin/chromium.
The screenshot is kept in out/inspector.png as a test artifact.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from egomem.config import load_config
from egomem.schemas import Fact, FactKind, Relation
from egomem.server.app import create_app
from egomem.server.tenants import TenantRegistry

from .conftest import live_app

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[2] / "out"


@pytest.fixture
def live_server(tmp_path: Path) -> Iterator[tuple[str, str, TenantRegistry]]:
    if not Path(CHROMIUM).exists() or shutil.which("chromium") is None:
        pytest.skip("Debian chromium is not installed (scripts/system-deps.sh installs it)")
    cfg = load_config(data_dir=tmp_path, environ={})
    reg = TenantRegistry(cfg)
    _, key = reg.create("home")
    with live_app(create_app(cfg, reg)) as port:
        yield f"http://127.0.0.1:{port}", key, reg
    reg.close()


def test_inspector_shows_memory_and_deletes(live_server: tuple[str, str, TenantRegistry]) -> None:
    from playwright.sync_api import sync_playwright

    url, key, reg = live_server
    s = reg.store("home")
    emily, john = s.create_user("Emily"), s.create_user("John")
    s.add_fact(Fact(user_id=emily.id, kind=FactKind.PREFERENCE, text="loves hiking", source_text="i love hiking"))
    old = s.add_fact(Fact(user_id=emily.id, text="lives in Lyon"))
    s.supersede_fact(old.id, Fact(user_id=emily.id, text="lives in Paris"))
    s.add_relation(Relation(subject_id=john.id, relation="colleague", object_id=emily.id))
    s.add_relation(Relation(subject_id=emily.id, relation="mother", object_name="Maria"))
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
        )
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto(url + "/inspector/")
        page.fill("#key", key)
        page.click("#login button")
        page.wait_for_selector("#users li[data-id]")
        assert page.locator("#users li[data-id]").count() == 2
        page.click(f"#users li[data-id='{emily.id}']")
        page.wait_for_selector("#facts")
        rows = page.locator("#facts tr[data-id]")
        assert rows.count() == 3
        assert page.locator("#facts tr.old").inner_text().find("lives in Lyon") >= 0  # history shown, struck out
        assert "i love hiking" in page.locator("#facts").inner_text()  # provenance
        graph = page.locator("#graph").text_content() or ""
        assert "John" in graph and "Maria" in graph and "mother" in graph
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "inspector.png"), full_page=True)
        # Delete a fact from the page; the store agrees.
        page.on("dialog", lambda d: d.accept())
        page.locator("#facts tr[data-id]:not(.old) .del").first.click()
        page.wait_for_function("document.querySelectorAll('#facts tr[data-id]').length === 2")
        assert len(s.list_facts(emily.id)) == 1
        browser.close()
