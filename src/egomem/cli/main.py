"""The `egomem` command line. Errors are one line on stderr and a non-zero exit."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from egomem.bench import BenchOptions, available, render, run_bench
from egomem.cli.progress import phases
from egomem.config import Config, load_config
from egomem.errors import EgomemError, InputError
from egomem.providers import DEFAULTS, FALLBACKS
from egomem.registry import ALL as ALL_REGISTRIES
from egomem.schemas import Sensitivity
from egomem.store import MemoryStore, open_store


class Context:
    def __init__(self, config_path: str | None, data_dir: str | None) -> None:
        self._config_path = config_path
        self._data_dir = data_dir
        self._config: Config | None = None

    @property
    def config(self) -> Config:
        if self._config is None:
            self._config = load_config(self._config_path, self._data_dir)
        return self._config

    def store(self) -> MemoryStore:
        return open_store(self.config)


pass_ctx = click.make_pass_decorator(Context)
MAX_NAME_CHARS = 200  # as the REST API's rename (server/admin.py)


def _echo_json(obj: Any) -> None:
    click.echo(json.dumps(obj, indent=2, ensure_ascii=False, default=str))


@click.group()
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="TOML config file.")
@click.option("--data-dir", type=click.Path(file_okay=False), help="Where the memory store lives.")
@click.version_option(package_name="egomem")
@click.pass_context
def cli(ctx: click.Context, config_path: str | None, data_dir: str | None) -> None:
    """egomem: lifelong memory of people for voice/vision assistants and robots."""
    ctx.obj = Context(config_path, data_dir)


# -- users ------------------------------------------------------------------------
@cli.group()
def users() -> None:
    """Inspect and manage remembered people."""


@users.command("list")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@pass_ctx
def users_list(c: Context, as_json: bool) -> None:
    """Everyone remembered: id, name, and how many facts are held about them."""
    store = c.store()
    try:
        rows = store.list_users()
        if as_json:
            _echo_json([u.model_dump() for u in rows])
            return
        if not rows:
            click.echo("no users in the store")
        for u in rows:
            facts = len(store.list_facts(u.id))
            kind = " (placeholder)" if u.placeholder else ""
            click.echo(f"{u.id}  {u.name or '<unknown>'}{kind}  facts={facts}")
    finally:
        store.close()


@users.command("show")
@click.argument("user_id")
@pass_ctx
def users_show(c: Context, user_id: str) -> None:
    """One person's profile: name, face and voice keys, facts (with their source), relations."""
    store = c.store()
    try:
        u = store.get_user(user_id)
        click.echo(f"id:    {u.id}\nname:  {u.name or '<unknown>'}")
        keys = store.list_keys(user_id=u.id)
        click.echo(
            f"keys:  {sum(k.modality == 'face' for k in keys)} face, {sum(k.modality == 'voice' for k in keys)} voice"
            + (f" (ids {', '.join(str(k.id) for k in keys)})" if keys else "")
        )
        for f in store.list_facts(u.id):
            decided = f", {f.identity_status} LLR {f.identity_llr:.2f}" if f.identity_llr is not None else ""
            click.echo(f"  [{f.kind}] {f.text}  (conf {f.confidence:.2f}, from {f.source_episode or '-'}{decided})")
        for r in store.list_relations(u.id):
            click.echo(f"  rel: {_edge(store, r.subject_id, r.relation, r.object_id, r.object_name)}")
        for e in store.list_episodes(u.id):  # what `users split --episode` names
            click.echo(f"  episode {e.id}: {e.summary or e.user_transcript[:60] or '(no transcript)'}")
    finally:
        store.close()


@users.command("rename")
@click.argument("user_id")
@click.argument("name")
@pass_ctx
def users_rename(c: Context, user_id: str, name: str) -> None:
    """Give a person a name, or correct it (kept in the history)."""
    if not name.strip():
        raise InputError("a name cannot be empty: give the person's name (to forget someone: users delete)")
    if len(name.strip()) > MAX_NAME_CHARS:
        raise InputError(f"a name is at most {MAX_NAME_CHARS} characters")
    name = " ".join(name.split())
    store = c.store()
    try:
        u = store.rename_user(user_id, name, cause="cli rename")
        click.echo(f"renamed {u.id} to {u.name}")
    finally:
        store.close()


@users.command("delete")
@click.argument("user_id")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@pass_ctx
def users_delete(c: Context, user_id: str, yes: bool) -> None:
    """Forget a person entirely: keys, facts, relations, the episodes only they were in, history."""
    store = c.store()
    try:
        u = store.get_user(user_id)
        if not yes and not click.confirm(f"Delete {u.name or u.id} and every memory of them?", default=False):
            raise click.Abort()
        report = store.delete_user(user_id, cause="cli delete")
        parts = ", ".join(f"{v} {k}" for k, v in report.removed.items())
        click.echo(f"deleted {user_id}: {parts}")
    finally:
        store.close()


@users.command("forget")
@click.argument("user_id")
@click.argument("topic")
@pass_ctx
def users_forget(c: Context, user_id: str, topic: str) -> None:
    """Forget what a person said about TOPIC: the matching facts go, with their history."""
    from egomem.privacy.forget import facts_about

    if not topic.strip():
        raise InputError("give the topic to forget (to forget the whole person: users delete)")
    store = c.store()
    try:
        ids = facts_about(store.list_facts(user_id, include_history=True), topic)
        if not ids:
            store.get_user(user_id)
        n = store.forget_facts(user_id, ids, cause="cli forget a topic")
        click.echo(f"forgot {n} fact(s) of {user_id} about {topic!r}")
    finally:
        store.close()


@users.command("sensitivity")
@click.argument("fact_id")
@click.argument("level", type=click.Choice([s.value for s in Sensitivity]))
@pass_ctx
def users_sensitivity(c: Context, fact_id: str, level: str) -> None:
    """Override a fact's sensitivity (none, health, money, relationship, private)."""
    store = c.store()
    try:
        f = store.set_fact_sensitivity(fact_id, Sensitivity(level), cause="cli sensitivity override")
        click.echo(f"{f.id}: {f.sensitivity.value}")
    finally:
        store.close()


@users.command("export")
@click.argument("user_id")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to a file instead of stdout.")
@pass_ctx
def users_export(c: Context, user_id: str, output: str | None) -> None:
    """Everything held about one person, as JSON (to stdout or -o FILE)."""
    store = c.store()
    try:
        data = store.export_user(user_id)
    finally:
        store.close()
    text = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    if output:
        Path(output).write_text(text + "\n", encoding="utf-8")
        click.echo(f"exported {user_id} to {output}")
    else:
        click.echo(text)


def _edge(store: MemoryStore, subj: str, rel: str, obj_id: str | None, obj_name: str | None) -> str:
    def name(uid: str) -> str:
        return store.get_user(uid).name or uid

    obj = name(obj_id) if obj_id else f"{obj_name} (not met)"
    return f"{name(subj)} -[{rel}]-> {obj}"


@cli.command()
@click.argument("user_id")
@pass_ctx
def graph(c: Context, user_id: str) -> None:
    """Show a user's relation edges (the social graph around them)."""
    store = c.store()
    try:
        store.get_user(user_id)
        edges = store.list_relations(user_id)
        if not edges:
            click.echo("no relations")
        for r in edges:
            click.echo(_edge(store, r.subject_id, r.relation, r.object_id, r.object_name))
    finally:
        store.close()


# -- providers ---------------------------------------------------------------------
@cli.command("providers")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def providers_cmd(as_json: bool) -> None:
    """Every registered provider of each kind: installed or not (missing packages), description."""
    rows: list[dict[str, Any]] = [
        {
            "kind": i.kind,
            "provider": i.name,
            "default": DEFAULTS.get(i.kind) == i.name,
            "fallback": FALLBACKS.get(i.kind) == i.name,
            "installed": i.installed,
            "missing": list(i.missing),
            "target": i.target,
            "description": i.description,
        }
        for kind in sorted(ALL_REGISTRIES, key=_kind_order)
        for i in ALL_REGISTRIES[kind].available()
    ]
    if as_json:
        _echo_json(rows)
        return
    click.echo(f"{'KIND':<8} {'PROVIDER':<15} {'ROLE':<8} {'STATE':<28} DESCRIPTION")
    for r in rows:
        role = "default" if r["default"] else "fallback" if r["fallback"] else ""
        state = "installed" if r["installed"] else f"missing: {', '.join(r['missing'])}"
        click.echo(f"{r['kind']:<8} {r['provider']:<15} {role:<8} {state:<28} {r['description']}")


def _kind_order(kind: str) -> tuple[int, str]:
    order = list(DEFAULTS)
    return (order.index(kind) if kind in order else len(order), kind)


# -- bench / demo ------------------------------------------------------------------
@cli.command()
@click.argument("name", type=click.Choice(available()))
@click.option("--data", type=click.Path(exists=True, file_okay=False), help="Dataset folder.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write metrics as JSON here.")
@click.option("--quick", is_flag=True, help="Smaller sizes (smoke run).")
@click.option("--set", "extra", multiple=True, metavar="KEY=VALUE", help="Benchmark-specific option.")
@click.option(
    "--allow-dirty",
    is_flag=True,
    help="Write into benchmarks/results/ from uncommitted code (the result and BENCHMARKS.md say so).",
)
def bench(
    name: str, data: str | None, json_path: str | None, quick: bool, extra: tuple[str, ...], allow_dirty: bool
) -> None:
    """Run a benchmark and print its table."""
    opts = BenchOptions(
        data=Path(data) if data else None,
        json_path=Path(json_path) if json_path else None,
        quick=quick,
        extra=dict(_kv(e) for e in extra),
        allow_dirty=allow_dirty,
    )
    with phases("bench") as say:
        opts.report = say
        result = run_bench(name, opts)
    click.echo(render(result))
    if json_path:
        click.echo(f"\nmetrics written to {json_path}")


def _kv(item: str) -> tuple[str, str]:
    if "=" not in item:
        raise EgomemError(f"--set expects KEY=VALUE, got {item!r}")
    k, v = item.split("=", 1)
    return k.strip(), v.strip()


@cli.command()
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the timeline and memory as JSON.")
@pass_ctx
def demo(c: Context, json_path: str | None) -> None:
    """The main job: the EgoMem scenario end to end, from audio and video."""
    from egomem.runtime.demo import run_demo, write_json

    data = run_demo(c.config, click.echo)
    if json_path:
        write_json(Path(json_path), data)
        click.echo(f"\ntimeline and memory written to {json_path}")


@cli.command()
@click.argument("recording", type=click.Path(dir_okay=False))
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the timeline and summary as JSON.")
@click.option("--realtime", is_flag=True, help="Replay at wall-clock pace instead of as fast as possible.")
@click.option("--stereo-duplex", is_flag=True, help="Left channel = microphone, right = the assistant's speech.")
@click.option("--quiet", is_flag=True, help="No timeline, only the summary.")
@click.option(
    "--people", is_flag=True, help="Then list who was seen and heard, with the evidence of each face-voice link."
)
@pass_ctx
def run(
    c: Context, recording: str, json_path: str | None, realtime: bool, stereo_duplex: bool, quiet: bool, people: bool
) -> None:
    """Process a recording (mp4/mkv/webm, or wav/flac): identify, converse, remember."""
    from egomem.cli.agent_run import run_agent
    from egomem.stream.sources import read_recording, replay

    rec = read_recording(recording, fps=c.config.runtime.video_fps, stereo_duplex=stereo_duplex)
    for w in rec.warnings:
        click.echo(f"warning: {w}", err=True)
    store = c.store()

    def people_seen() -> dict[str, Any]:
        from egomem.cli.people import report_people

        lines, report = report_people(recording, store, c.config.face.threshold)
        click.echo("people seen and heard:")
        for line in lines:
            click.echo("  " + line)
        return {"people": report}

    try:
        steps = replay(rec, realtime=realtime)
        length = int(rec.duration_s / 0.08) + 1
        run_agent(
            c.config,
            store,
            steps,
            source=recording,
            lockstep=not realtime,
            quiet=quiet,
            json_path=json_path,
            length=length,
            after=people_seen if people else None,
        )
    finally:
        store.close()


@cli.command()
@click.option("--host", help="Interface to bind (default from config: 127.0.0.1).")
@click.option("--port", type=int, help="Port (default from config: 8765).")
@pass_ctx
def serve(c: Context, host: str | None, port: int | None) -> None:
    """Run the memory service: device streams, admin API, web inspector."""
    from fastapi import FastAPI

    from egomem.server.app import create_app
    from egomem.server.serve import serve as serve_app

    def make_app() -> FastAPI:
        app = create_app(c.config)
        app.state.models.load_all()  # before devices connect (see Models.load_all)
        return app

    serve_app(make_app, host or c.config.server.host, port or c.config.server.port)


@cli.command()
@click.argument("recording", type=click.Path(dir_okay=False))
@click.option("--url", default="ws://127.0.0.1:8765", show_default=True)
@click.option("--key", envvar="EGOMEM_API_KEY", required=True, help="API key (or EGOMEM_API_KEY).")
@click.option("--fast", is_flag=True, help="Send as fast as the server takes it, not at real-time pace.")
@click.option("--dialog", type=click.Choice(["server", "client"]), default="server", show_default=True)
@pass_ctx
def client(c: Context, recording: str, url: str, key: str, fast: bool, dialog: str) -> None:
    """Stream a recording to `egomem serve` like a robot would, and print the events."""
    from egomem.server.client import stream_recording
    from egomem.stream.sources import read_recording

    rec = read_recording(recording, fps=c.config.runtime.video_fps)

    def show(ev: dict[str, Any]) -> None:
        t = ev.get("time")
        fields = {k: v for k, v in ev.items() if k not in ("time", "type")}
        click.echo(f"{'' if t is None else f'{t:7.1f}s'}  {ev['type']:<9} {json.dumps(fields, ensure_ascii=False)}")

    stream_recording(url, key, rec, realtime=not fast, on_event=show, dialog=dialog)


from egomem.cli.live import live as _live_command  # noqa: E402  (kept next to its registration)
from egomem.cli.memorize import memorize as _memorize_command  # noqa: E402
from egomem.cli.models import models as _models_group  # noqa: E402

cli.add_command(_models_group)

from egomem.cli.ask import ask as _ask_cmd  # noqa: E402
from egomem.cli.ask import mcp as _mcp_cmd  # noqa: E402

cli.add_command(_ask_cmd)
cli.add_command(_mcp_cmd)
cli.add_command(_live_command)
cli.add_command(_memorize_command)

from egomem.cli.data import data as _data_group  # noqa: E402

cli.add_command(_data_group)

from egomem.cli.people import people as _people_command  # noqa: E402
from egomem.cli.tenants import tenants as _tenants_group  # noqa: E402

cli.add_command(_tenants_group)

cli.add_command(_people_command)

from egomem.cli.eval import eval_group as _eval_group  # noqa: E402

cli.add_command(_eval_group)

from egomem.cli.consolidate import consolidate as _consolidate_command  # noqa: E402

cli.add_command(_consolidate_command)

from egomem.cli.repair import merge as _merge_cmd  # noqa: E402
from egomem.cli.repair import repairs as _repairs_cmd  # noqa: E402
from egomem.cli.repair import split as _split_cmd  # noqa: E402
from egomem.cli.repair import undo as _undo_cmd  # noqa: E402

for _repair_cmd in (_merge_cmd, _split_cmd, _undo_cmd, _repairs_cmd):
    users.add_command(_repair_cmd)

from egomem.cli.queue import status as _status_command  # noqa: E402
from egomem.cli.queue import worker as _worker_command  # noqa: E402

cli.add_command(_status_command)
cli.add_command(_worker_command)


def main(argv: list[str] | None = None) -> None:
    try:
        cli.main(args=argv, prog_name="egomem", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(1)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except EgomemError as exc:
        click.echo(f"egomem: error: {exc}", err=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
