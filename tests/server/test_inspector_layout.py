"""The inspector fits the screen at 1280 px and on a phone (390 px): nothing runs off the page,
with long memories, long episode ids and a transcript. Screenshots: out/inspector-*.png (the
committed copies are docs/screenshots/)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from egomem.config import load_config
from egomem.schemas import Episode, Fact, Relation
from egomem.server.app import create_app
from egomem.server.tenants import TenantRegistry

from .conftest import live_app

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[2] / "out"


@pytest.mark.parametrize(("width", "height", "name"), [(1280, 900, "1280"), (390, 844, "phone")])
def test_inspector_fits_the_screen(tmp_path: Path, width: int, height: int, name: str) -> None:
    if not Path(CHROMIUM).exists() or shutil.which("chromium") is None:
        pytest.skip("Debian chromium is not installed (scripts/system-deps.sh installs it)")
    from playwright.sync_api import sync_playwright

    cfg = load_config(data_dir=tmp_path, environ={})
    reg = TenantRegistry(cfg)
    _, key = reg.create("home")
    s = reg.store("home")
    emily, john = s.create_user("Emily Hawthorne-Lindqvist"), s.create_user("John")
    ep = s.add_episode(
        Episode(start=1.7e9, end=1.7e9 + 300, participants=[emily.id], user_transcript="I " + "really " * 60 + "do")
    )
    long_quote = "well you know what I have always loved, ever since I was a child, " * 4
    s.add_fact(Fact(user_id=emily.id, text="loves hiking in the Dolomites every summer", source_text=long_quote))
    s.add_fact(Fact(user_id=emily.id, text="x" * 120, source_episode=ep.id))  # one unbreakable word
    s.add_relation(Relation(subject_id=john.id, relation="colleague", object_id=emily.id))
    app = create_app(cfg, reg)
    with live_app(app) as port, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(f"http://127.0.0.1:{port}/inspector/")
        page.fill("#key", key)
        page.click("#login button")
        page.wait_for_selector("#users li[data-id]")
        # The live view authenticated with its first message (the key is not in the URL).
        deadline = time.time() + 10
        while not app.state.watchers.get("home") and time.time() < deadline:
            time.sleep(0.1)
        assert app.state.watchers.get("home"), "the inspector's live view did not authenticate"
        page.click(f"#users li[data-id='{emily.id}']")
        page.wait_for_selector("#facts tr[data-id]")
        page.click(".episodes details summary")  # the transcript open too
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"the page is {overflow} px wider than the {width} px window"
        for sel in ("#facts", "#graph", ".episodes", "#users", "header"):
            box = page.locator(sel).first.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5, sel
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"inspector-{name}.png"), full_page=True)
        browser.close()
    reg.close()
