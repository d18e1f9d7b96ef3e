"""The demo scenario over the network: uvicorn on 127.0.0.1, the reference client streams
day 1 and day 2 as a robot would; the same memory and the same answer come out."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI

from egomem.config import load_config
from egomem.errors import InputError
from egomem.runtime.demo import ASSETS, memory_snapshot
from egomem.server.app import create_app
from egomem.server.client import stream_recording
from egomem.server.tenants import TenantRegistry
from egomem.stream.sources import read_recording

from .conftest import live_app

APPS: list[FastAPI] = []  # the server fixture's app, for tests that look at its state


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, TenantRegistry]]:
    # The network path is what is tested here, not the extractor: the rules keep it fast
    # (the demo test runs the default local language model over the same recordings).
    # The demo recordings are owned by the test: nobody in them is asked for consent (`serve` defaults to ask).
    env = {"EGOMEM_LLM__PROVIDER": "rules", "EGOMEM_PRIVACY__CONSENT": "implicit"}
    cfg = load_config(data_dir=tmp_path_factory.mktemp("serve"), environ=env)
    reg = TenantRegistry(cfg)
    _, key = reg.create("home")
    app = create_app(cfg, reg)
    app.state.models.load_all()  # as `egomem serve` does before devices connect
    APPS[:] = [app]
    with live_app(app) as port:
        yield f"ws://127.0.0.1:{port}", key, reg
    reg.close()


def test_demo_scenario_over_websocket(server: tuple[str, str, TenantRegistry]) -> None:
    url, key, reg = server
    day1 = stream_recording(url, key, read_recording(ASSETS / "day1.mp4"), realtime=False)
    assert day1[-1]["type"] == "done" and day1[-1]["sessions"] == 2 and day1[-1]["reason"] == "end"
    day2 = stream_recording(url, key, read_recording(ASSETS / "day2.mp4"), realtime=False)
    said = [e["text"] for e in day2 if e["type"] == "assistant"]
    assert any(s.startswith("Hi Emily") for s in said)
    assert any(s.startswith("Yes, your colleague John") and "tennis" in s for s in said)
    people = {u["name"]: u for u in memory_snapshot(reg.store("home"))}
    assert set(people) == {"Emily", "John"}
    assert {"relation": "colleague", "person": "Emily"} in people["John"]["relations"]
    assert any("learn" in f["text"] and "tennis" in f["text"] for f in people["Emily"]["facts"])
    _inspector_screenshot(url.replace("ws://", "http://"), key, people["Emily"]["id"])


def _inspector_screenshot(http_url: str, key: str, emily_id: str) -> None:
    """The web inspector shows what the robot's two days left in memory (screenshot kept in out/)."""
    import shutil

    if shutil.which("chromium") is None:
        return  # the browser test of the inspector itself skips with the reason
    from playwright.sync_api import sync_playwright

    out = Path(__file__).resolve().parents[2] / "out"
    out.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1200, "height": 1000})
        page.goto(http_url + "/inspector/")
        page.fill("#key", key)
        page.click("#login button")
        page.click(f"#users li[data-id='{emily_id}']")
        page.wait_for_selector("#facts")
        assert "wants to learn to play tennis" in page.locator("#facts").inner_text()
        assert "John" in (page.locator("#graph").text_content() or "")
        page.screenshot(path=str(out / "inspector-demo.png"), full_page=True)
        browser.close()


def test_bad_frames_get_error_events_and_the_session_survives(server: tuple[str, str, TenantRegistry]) -> None:
    from websockets.sync.client import connect

    url, key, _ = server
    with connect(f"{url}/api/v1/stream", additional_headers={"Authorization": f"Bearer {key}"}) as ws:
        ws.send(b"\x09junk")
        ws.send(b"\x01\x00")  # odd PCM16 length
        ws.send("a text message")
        ws.send(b"\x06")
        events = []
        for msg in ws:
            import json

            events.append(json.loads(msg))
            if events[-1]["type"] == "done":
                break
    errors = [e["message"] for e in events if e["type"] == "error"]
    assert any("unknown frame kind" in m for m in errors) and any("odd number" in m for m in errors)
    assert any("binary frames" in m for m in errors) and events[-1]["reason"] == "end"


def test_stream_needs_a_valid_key(server: tuple[str, str, TenantRegistry]) -> None:
    from websockets.exceptions import ConnectionClosed, InvalidStatus
    from websockets.sync.client import connect

    url, _, _ = server
    with pytest.raises((ConnectionClosed, InvalidStatus)), connect(f"{url}/api/v1/stream?api_key=egm_bad") as ws:
        ws.recv(timeout=10)


def test_client_disconnect_mid_session_keeps_memory(server: tuple[str, str, TenantRegistry], tmp_path: Path) -> None:
    from websockets.sync.client import connect

    from egomem.server.client import jpeg
    from egomem.server.protocol import Kind, encode, float_to_pcm16
    from egomem.stream.sources import replay

    url, key, reg = server
    rec = read_recording(ASSETS / "day1.mp4")
    before = len(reg.store("home").list_episodes())
    with connect(f"{url}/api/v1/stream", additional_headers={"Authorization": f"Bearer {key}"}) as ws:
        for step in replay(rec):
            if step.t > 17.0:  # Emily's session is over; cut the connection without END
                break
            for fr in step.frames:
                ws.send(encode(Kind.VIDEO, jpeg(fr.image)))
            ws.send(encode(Kind.LISTEN, float_to_pcm16(step.listen)))
    deadline = time.time() + 120
    while time.time() < deadline and len(reg.store("home").list_episodes()) == before:
        time.sleep(0.5)
    assert len(reg.store("home").list_episodes()) == before + 1  # the finished session was written


def test_a_streaming_device_keeps_its_tenant_awake(server: tuple[str, str, TenantRegistry]) -> None:
    """Every event of a device's session reaches the tenant's sleep-time schedule (server/sleep.py):
    no consolidation starts while the device talks."""
    url, key, _ = server
    sleep = APPS[0].state.sleep.of("home")
    assert sleep is not None
    before, heard = sleep.last_activity, []
    # What is checked is that the session's events reached the schedule, not that the stream ended
    # well (the demo test checks that): a stream cut short (a keepalive timeout on a loaded machine)
    # has had its events too.
    with contextlib.suppress(InputError):
        stream_recording(url, key, read_recording(ASSETS / "day1.mp4"), realtime=False, on_event=heard.append)
    assert any(e["type"] in ("user", "heard") for e in heard) and sleep.last_activity > before
    assert not sleep.idle() and sleep.reports == []
