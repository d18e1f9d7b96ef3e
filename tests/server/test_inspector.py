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


def test_inspector_splits_an_episode_off_and_undoes_it(live_server: tuple[str, str, TenantRegistry]) -> None:
    from playwright.sync_api import sync_playwright

    from egomem.schemas import Episode

    url, key, reg = live_server
    s = reg.store("home")
    ann = s.create_user("Ann")
    bob = s.create_user("Bob")
    mine = s.add_episode(Episode(start=1, end=2, participants=[ann.id], summary="Ann's visit"))
    his = s.add_episode(Episode(start=3, end=4, participants=[ann.id], summary="a pilot's visit"))
    s.add_fact(Fact(user_id=ann.id, text="is a nurse", source_episode=mine.id))
    s.add_fact(
        Fact(user_id=ann.id, text="is a pilot", source_episode=his.id, identity_status="known", identity_llr=0.4)
    )
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto(url + "/inspector/")
        page.fill("#key", key)
        page.click("#login button")
        page.click(f"#users li[data-id='{ann.id}']")
        page.wait_for_selector("#facts")
        assert "identity known, LLR 0.40" in page.locator("#facts").inner_text()  # why the fact is Ann's
        page.once("dialog", lambda d: d.accept("Dan"))
        page.click(f"li[data-episode='{his.id}'] .split")
        page.wait_for_function("document.querySelector('#person-name').textContent === 'Dan'")
        [dan] = s.find_users_by_name("Dan")
        assert [f.text for f in s.list_facts(dan.id)] == ["is a pilot"]
        assert [f.text for f in s.list_facts(ann.id)] == ["is a nurse"]
        page.click(f"#users li[data-id='{ann.id}']")
        page.wait_for_selector("#repairs li[data-repair] .undo")
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "inspector-repair.png"), full_page=True)
        page.click("#repairs li[data-repair] .undo")
        page.wait_for_selector("#repairs li[data-repair] .meta")
        assert s.find_users_by_name("Dan") == [] and len(s.list_facts(ann.id)) == 2
        # Merge Bob into Ann from the page, then undo it there.
        page.select_option("#merge-other", bob.id)
        page.once("dialog", lambda d: d.accept())
        page.click("#merge")
        page.wait_for_function("document.querySelectorAll('#repairs .undo').length === 1")
        assert [u.name for u in s.list_users()] == ["Ann"]
        page.click("#repairs .undo")
        page.wait_for_function("document.querySelectorAll('#repairs .undo').length === 0")
        assert sorted(u.name or "" for u in s.list_users()) == ["Ann", "Bob"]
        browser.close()
