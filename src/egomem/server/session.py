"""One device's WebSocket session: frames in, the agent in a worker thread, events out.

The receive loop never runs the agent on the event loop: each batch of 80 ms steps is
processed in a worker thread while the loop keeps serving other devices. Events go
out through a bounded queue; a client that does not read loses the oldest events (and
is told how many), never stalls the agent. When the client says END, disconnects or
idles past the timeout, the agent finishes the open session and writes its memory.

Pace (`?pace=`): `live` (the default: a device streaming as things happen) never holds the
stream up: identity polls that find one still running are skipped and finished sessions go
to the memory queue, as in `egomem run --live`. `replay` (a recording sent as fast as the
server takes it, the reference client's `--fast`) waits for each identity poll and memory
round, so the same recording gives the same memory. Either way `done` comes once the
session's memory is written; the language model's pass after the rules' write
(`memory.model_pass = "after"`) follows on the tenant's own worker (server/refiners.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import time
from typing import Any

import numpy as np
from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from egomem.dialog.remote import RemoteModel
from egomem.errors import EgomemError, InputError
from egomem.runtime.agent import EgoMem
from egomem.runtime.build import Models, Services, build_agent
from egomem.runtime.timeline import Event, Timeline
from egomem.server.ask_api import process_llm
from egomem.server.deps import websocket_tenant
from egomem.server.protocol import Kind, decode, pcm16_to_float
from egomem.stream.buffer import Frame as VideoFrame
from egomem.stream.clock import SAMPLES_PER_STEP, STEP_S
from egomem.stream.sources import Step

router = APIRouter()
EVENT_QUEUE = 1000
IDLE_TIMEOUT_S = 60.0
MAX_MESSAGES_PER_S = 400  # a live device sends ~12.5 audio + a few video frames per second


class StepAssembler:
    """Turns LISTEN/SPEAK audio and VIDEO frames into the agent's 80 ms steps."""

    def __init__(self) -> None:
        self.listen = np.zeros(0, np.float32)
        self.speak = np.zeros(0, np.float32)
        self.frames: list[VideoFrame] = []
        self.index = 0

    @property
    def now_s(self) -> float:
        return (self.index * SAMPLES_PER_STEP + self.listen.size) / 16000

    def add_video(self, jpeg: bytes) -> None:
        from PIL import Image, UnidentifiedImageError

        try:
            img = np.asarray(Image.open(io.BytesIO(jpeg)).convert("RGB"))
        except (UnidentifiedImageError, OSError) as exc:
            raise InputError(f"undecodable JPEG frame: {exc}") from exc
        self.frames.append(VideoFrame(self.now_s, img))

    def steps(self, final: bool = False) -> list[Step]:
        out = []
        while self.listen.size >= SAMPLES_PER_STEP or (final and self.listen.size):
            lis = _take(self.listen, SAMPLES_PER_STEP)
            spk = _take(self.speak, SAMPLES_PER_STEP)
            self.listen, self.speak = self.listen[SAMPLES_PER_STEP:], self.speak[SAMPLES_PER_STEP:]
            t = self.index * STEP_S
            frames = [f for f in self.frames if f.t < t + STEP_S]
            self.frames = [f for f in self.frames if f.t >= t + STEP_S]
            out.append(Step(self.index, t, lis, spk, frames))
            self.index += 1
        return out


def _take(a: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros(n, np.float32)
    out[: min(n, a.size)] = a[:n]
    return out


class Outbox:
    """Bounded event queue filled from agent threads, drained by the sender task."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue(maxsize=EVENT_QUEUE)
        self.dropped = 0

    def put(self, event: dict[str, Any] | None) -> None:
        self.loop.call_soon_threadsafe(self._put, event)

    def _put(self, event: dict[str, Any] | None) -> None:
        if self.queue.full():
            with contextlib.suppress(asyncio.QueueEmpty):
                self.queue.get_nowait()
            self.dropped += 1
        self.queue.put_nowait(event)


@router.websocket("/api/v1/stream")
async def stream(ws: WebSocket) -> None:
    app = ws.app
    tenant = await websocket_tenant(ws)
    if tenant is None:
        return
    outbox = Outbox(asyncio.get_running_loop())
    timeline = Timeline()

    sleep = app.state.sleep.of(tenant)  # the tenant's sleep-time schedule hears of every event

    def deliver(ev: Event) -> None:  # to this device, and to the tenant's live inspector views
        if sleep is not None and ev.type != "warning":
            sleep.activity()
        event = ev.to_json()
        outbox.put(event)
        _broadcast(app, tenant, event)

    timeline.subscribe(deliver)
    remote = ws.query_params.get("dialog", "server") == "client"
    try:
        lockstep = _lockstep(ws.query_params.get("pace", "live"))
        # In a worker thread, as the services' first use may load the language model: on the event
        # loop that would miss the client's keepalive pings.
        agent = await asyncio.to_thread(_build, app, tenant, timeline, RemoteModel() if remote else None)
    except EgomemError as exc:
        await ws.send_json({"type": "error", "message": str(exc)})
        await ws.close(code=1011)
        return
    if sleep is not None:
        sleep.watch_visitors(agent)
    metrics = app.state.metrics
    metrics.inc("egomem_sessions_total")
    sender = asyncio.create_task(_send_events(ws, outbox))
    asm = StepAssembler()
    agent.start()
    wall0 = time.perf_counter()
    reason = "end"
    try:
        with app.state.refiners.device(agent.perception_behind):  # the model's passes yield to it
            reason = await _receive(ws, agent, asm, outbox, lockstep)
    finally:
        tail = asm.steps(final=True)
        with sleep.session() if sleep is not None else contextlib.nullcontext():  # no sleep while it writes
            await asyncio.to_thread(_finish, agent, tail, lockstep)
        result = agent.result(time.perf_counter() - wall0)
        outbox.put(
            {
                "type": "done",
                "reason": reason,
                "duration_s": round(result.duration_s, 2),
                "sessions": len(result.sessions),
                "dropped_events": outbox.dropped,
                "memory_failures": result.memory_failures,
            }
        )
        outbox.put(None)
        if sleep is not None:
            sleep.unwatch_visitors(agent)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(sender, timeout=10)
        with contextlib.suppress(Exception):
            await ws.close()


PACES = {"live": False, "replay": True}  # pace -> lockstep


def _lockstep(pace: str) -> bool:
    if pace not in PACES:
        raise InputError(f"pace must be one of {', '.join(PACES)}; got {pace!r}")
    return PACES[pace]


async def _receive(ws: WebSocket, agent: EgoMem, asm: StepAssembler, outbox: Outbox, lockstep: bool) -> str:
    window_start, count = time.monotonic(), 0
    while True:
        try:
            msg = await asyncio.wait_for(ws.receive(), timeout=IDLE_TIMEOUT_S)
        except TimeoutError:
            outbox.put({"type": "error", "message": f"no data for {IDLE_TIMEOUT_S:.0f} s: closing"})
            return "idle"
        if msg["type"] == "websocket.disconnect":
            return "disconnect"
        count += 1
        if time.monotonic() - window_start >= 1.0:
            window_start, count = time.monotonic(), 1
        elif count > MAX_MESSAGES_PER_S:
            await asyncio.sleep(max(0.0, 1.0 - (time.monotonic() - window_start)))  # throttle, don't drop
        data = msg.get("bytes")
        if data is None:
            outbox.put({"type": "error", "message": "text messages are not part of the protocol; send binary frames"})
            continue
        try:
            frame = decode(data)
            steps = _apply(frame, agent, asm)
        except InputError as exc:
            outbox.put({"type": "error", "message": str(exc)})
            continue
        if frame.kind == Kind.END:
            return "end"
        if steps:
            await asyncio.to_thread(_advance, agent, steps, lockstep)


def _apply(frame: Any, agent: EgoMem, asm: StepAssembler) -> list[Step]:
    if frame.kind == Kind.LISTEN:
        asm.listen = np.concatenate([asm.listen, pcm16_to_float(frame.payload)])
        return asm.steps()
    if frame.kind == Kind.SPEAK:
        asm.speak = np.concatenate([asm.speak, pcm16_to_float(frame.payload)])
    elif frame.kind == Kind.VIDEO:
        asm.add_video(frame.payload)
    elif frame.kind == Kind.ASSISTANT_TEXT:
        agent.assistant_said(frame.payload.decode("utf-8"), asm.now_s)
    elif frame.kind == Kind.MONOLOGUE:
        agent.monologue(frame.payload.decode("utf-8"))
    return []


def _build(app: Any, tenant: str, timeline: Timeline, model: RemoteModel | None) -> EgoMem:
    services = _services(app, tenant)
    refined_by_tenant = app.state.refiners.ensure(tenant, services)  # the model's passes, after `done`
    # consent: `ask` unless [privacy] consent says otherwise
    return build_agent(services, timeline, model=model, command="serve", refine_here=not refined_by_tenant)


def _services(app: Any, tenant: str) -> Services:
    """The tenant's services (its store; the process's models and language model), built once."""
    llm = process_llm(app.state, app.state.config)  # its own lock: app.state.lock guards cheap work only
    with app.state.lock:
        built: dict[str, Services] = app.state.services
        if tenant not in built:
            models: Models = app.state.models
            built[tenant] = Services(app.state.config, app.state.tenants.store(tenant), models, llm=llm)
        return built[tenant]


def _advance(agent: EgoMem, steps: list[Step], lockstep: bool) -> None:
    for s in steps:
        agent.advance(s, lockstep=lockstep)


def _finish(agent: EgoMem, tail: list[Step], lockstep: bool) -> None:
    _advance(agent, tail, lockstep)
    agent.stop()


async def _send_events(ws: WebSocket, outbox: Outbox) -> None:
    while True:
        ev = await outbox.queue.get()
        if ev is None:
            return
        try:
            await ws.send_text(json.dumps(ev, ensure_ascii=False, default=str))
        except (WebSocketDisconnect, RuntimeError):
            continue  # client gone: keep draining so the agent never blocks


def _watchers(app: Any, tenant: str) -> set[Outbox]:
    with app.state.lock:
        registry: dict[str, set[Outbox]] = app.state.watchers
        return registry.setdefault(tenant, set())


def _broadcast(app: Any, tenant: str, event: dict[str, Any]) -> None:
    """Copy a session's event to the tenant's watchers (the web inspector's live view)."""
    for box in list(_watchers(app, tenant)):
        box.put(event)


@router.websocket("/api/v1/watch")
async def watch(ws: WebSocket) -> None:
    """Read-only: the events of every active session of the caller's tenant."""
    tenant = await websocket_tenant(ws)
    if tenant is None:
        return
    box = Outbox(asyncio.get_running_loop())
    watchers = _watchers(ws.app, tenant)
    watchers.add(box)
    sender = asyncio.create_task(_send_events(ws, box))
    try:
        while (await ws.receive())["type"] != "websocket.disconnect":
            pass
    finally:
        watchers.discard(box)
        box.put(None)
        with contextlib.suppress(Exception):
            await sender
