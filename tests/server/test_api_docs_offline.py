"""/docs works with no network: Swagger UI comes from an installed package, never a CDN."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from egomem.config import load_config
from egomem.server.app import create_app
from egomem.server.docs import swagger_ui_dir
from egomem.server.tenants import TenantRegistry

from .conftest import live_app

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[2] / "out"


def test_docs_page_loads_only_local_files(tmp_path: Path) -> None:
    assert swagger_ui_dir() is not None, "swagger-ui-bundle-v2 is a dependency (pyproject.toml)"
    cfg = load_config(data_dir=tmp_path, environ={})
    with TestClient(create_app(cfg, TenantRegistry(cfg))) as client:
        page = client.get("/docs")
        assert page.status_code == 200
        urls = re.findall(r"""(?:src|href)=["']([^"']+)["']|url: ?["']([^"']+)["']""", page.text)
        found = [u for pair in urls for u in pair if u]
        assert found and all(u.startswith("/") for u in found), found  # nothing from another host
        for asset in ("swagger-ui-bundle.js", "swagger-ui.css"):
            r = client.get(f"/docs/assets/{asset}")
            assert r.status_code == 200 and len(r.content) > 10_000
        assert client.get("/redoc").status_code == 404  # ReDoc would need a CDN: not offered


def test_docs_render_in_chromium_with_the_network_cut(tmp_path: Path) -> None:
    if not Path(CHROMIUM).exists() or shutil.which("chromium") is None:
        pytest.skip("Debian chromium is not installed (scripts/system-deps.sh installs it)")
    from playwright.sync_api import Route, sync_playwright

    cfg = load_config(data_dir=tmp_path, environ={})
    outside: list[str] = []

    def only_loopback(route: Route) -> None:
        if route.request.url.startswith("http://127.0.0.1:"):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    with live_app(create_app(cfg, TenantRegistry(cfg))) as port, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.route("**/*", only_loopback)
        page.goto(f"http://127.0.0.1:{port}/docs")
        page.wait_for_selector(".swagger-ui .opblock", timeout=30_000)
        assert page.locator(".swagger-ui .opblock").count() > 10  # the routes are listed
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "api-docs.png"))
        browser.close()
    assert not outside, outside
