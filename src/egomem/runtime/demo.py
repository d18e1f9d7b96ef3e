"""The main job: the EgoMem scenario end to end, from audio and video.

Day 1: Emily is seen and heard, says her name and something about herself; John is
seen and heard, says he played tennis and that he works with Emily. Day 2: Emily
appears again; the agent recognises her by face and voice, greets her by name and
recalls a fact; she asks whether any of her colleagues loves tennis; the model's
`<retr>` query pulls John's tennis fact into Level 2 and the answer names him; her
new interest is written to memory. The recordings (real photos, synthesised voices)
are in `demo_assets/`; nothing here reads their script.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from egomem.config import Config
from egomem.errors import EgomemError
from egomem.privacy.consent import resolve_policy
from egomem.runtime.build import Models, build_agent
from egomem.runtime.timeline import Event, Timeline, format_event
from egomem.store.base import MemoryStore
from egomem.store.sqlite import SQLiteStore
from egomem.stream.sources import read_recording, replay

ASSETS = Path(__file__).parent / "demo_assets"
DAYS = ("day1", "day2")


def name_resolver(store: MemoryStore) -> Callable[[str | None], str]:
    def name_of(user_id: str | None) -> str:
        if user_id is None:
            return "nobody"
        try:
            return store.get_user(user_id).name or f"new person {user_id[-4:]}"
        except EgomemError:  # deleted meanwhile
            return user_id

    return name_of


def memory_snapshot(store: MemoryStore) -> list[dict[str, Any]]:
    out = []
    for u in store.list_users():
        keys = store.list_keys(user_id=u.id)
        rels = []
        for r in store.list_relations(u.id):
            if r.subject_id != u.id:
                continue
            other = store.get_user(r.object_id).name if r.object_id else r.object_name
            rels.append({"relation": r.relation, "person": other})
        out.append(
            {
                "id": u.id,
                "name": u.name,
                "placeholder": u.placeholder,
                "face_keys": sum(k.modality == "face" for k in keys),
                "voice_keys": sum(k.modality == "voice" for k in keys),
                "facts": [
                    {"kind": f.kind.value, "text": f.text, "valid_from": f.valid_from} for f in store.list_facts(u.id)
                ],
                "relations": rels,
                "episodes": len(store.list_episodes(u.id)),
                "last_seen": u.last_seen,
            }
        )
    return out


def run_demo(config: Config, echo: Callable[[str], None], *, assets: Path = ASSETS) -> dict[str, Any]:
    """Run both days over a fresh demo store under `<data_dir>/demo`; returns events + memory."""
    demo_dir = config.data_dir / "demo"
    if demo_dir.exists():
        shutil.rmtree(demo_dir)
    store = SQLiteStore(demo_dir / "memory.db")
    models = Models(config)
    name_of = name_resolver(store)
    events: list[dict[str, Any]] = []
    echo(f"egomem demo — memory store: {demo_dir / 'memory.db'} (fresh)")
    policy = resolve_policy(config.privacy.consent, "demo")
    echo(
        f"consent policy: {policy.value}"
        + (
            " (a recording you own: people are remembered without being asked; docs/privacy.md)"
            if policy == "implicit"
            else ""
        )
    )
    try:
        for day in DAYS:
            rec = read_recording(assets / f"{day}.mp4", fps=config.runtime.video_fps)
            echo(f"\n== {day}: {rec.duration_s:.0f} s of camera and microphone ==")
            timeline = Timeline()

            def show(ev: Event, day: str = day) -> None:
                events.append({"day": day, **ev.to_json()})
                if ev.type != "memchunk" or ev.fields.get("text"):
                    echo(format_event(ev, name_of))

            timeline.subscribe(show)
            agent = build_agent(config, store, models, timeline, command="demo")
            agent.record()
            result = agent.run(replay(rec), lockstep=True)
            wav = agent.write_recording(demo_dir / f"{day}-conversation.wav")
            echo(
                f"-- {day}: {len(result.sessions)} session(s); processed {result.duration_s:.0f} s of stream "
                f"in {result.wall_s:.1f} s; the conversation (left: microphone, right: assistant) is in {wav}"
            )
        memory = memory_snapshot(store)
    finally:
        store.close()
    echo("\n== memory after both days ==")
    for u in memory:
        keys = f"{u['face_keys']} face / {u['voice_keys']} voice keys"
        echo(f"{u['name'] or '<unnamed>'}: {keys}, {u['episodes']} episodes")
        for f in u["facts"]:
            echo(f"  [{f['kind']}] {f['text']}")
        for r in u["relations"]:
            echo(f"  {r['relation']}: {r['person']}")
    return {"events": events, "memory": memory}


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
