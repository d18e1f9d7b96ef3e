"""`egomem ask` (a question over memory) and `egomem mcp` (the MCP server for agent frameworks)."""

from __future__ import annotations

import json
from typing import Protocol, cast

import click

from egomem.cli.progress import phases
from egomem.config import Config
from egomem.store import MemoryStore


class _Ctx(Protocol):  # egomem.cli.main.Context (not imported: main imports this module)
    @property
    def config(self) -> Config: ...

    def store(self) -> MemoryStore: ...


@click.command()
@click.argument("question")
@click.option("--user", "user_id", help="Who asks (a user id): resolves 'my sister', 'I', 'my'.")
@click.option("--as-of", "as_of", metavar="TIME", help="Only memory from before TIME (ISO 8601 date/time or epoch s).")
@click.option("--json", "as_json", is_flag=True, help="The answer and its evidence as JSON.")
@click.option("--no-llm", is_flag=True, help="Answer with the best evidence itself, not the configured LLM.")
@click.pass_obj
def ask(c: _Ctx, question: str, user_id: str | None, as_of: str | None, as_json: bool, no_llm: bool) -> None:
    """Answer QUESTION from memory, with the evidence it rests on."""
    from egomem.retrieval.ask import Asker, build_llm
    from egomem.retrieval.dense import EmbeddingCache
    from egomem.retrieval.encoder import default_encoder
    from egomem.retrieval.timex import parse_as_of

    cutoff = parse_as_of(as_of) if as_of is not None else None
    cfg = c.config
    store = c.store()
    # The default local LLM takes minutes on a small CPU: each step is shown as it begins
    # (a spinner with its time on a terminal, timestamped lines when piped).
    try:
        with phases("ask") as say:
            if not no_llm and cfg.ask.llm:
                say(f"loading the language model ({cfg.llm.provider})")
            llm = None if no_llm else build_llm(cfg)
            say("loading the text encoder")
            encoder = default_encoder()
            encoder.encode([question])  # loads it now, so that round 1's time is the search's own
            asker = Asker(store, EmbeddingCache(encoder), cfg.ask, llm, report=say, admins=cfg.privacy.admins)
            result = asker.ask(question, user_id=user_id, as_of=cutoff)
    finally:
        store.close()
    if as_json:
        click.echo(json.dumps(result.model_dump(mode="json"), indent=2, ensure_ascii=False))
        return
    click.echo(result.answer)
    for note in result.notes:
        click.echo(f"note: {note}")
    if result.evidence:
        click.echo(f"\nevidence ({result.rounds} round(s), {result.stopped}):")
    for i, e in enumerate(result.evidence, 1):
        who = e.person or e.speaker or ""
        when = (e.time_text or "")[:16].replace("T", " ")
        src = e.fact_id or (f"{e.episode_id}#{e.turn_index}" if e.turn_index is not None else e.episode_id) or ""
        src = e.relation_id or src
        click.echo(f'{i:2}. [{e.kind}] "{e.quote}" — {who} {when} ({src})'.replace("  ", " "))


@click.command()
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio (a client spawns this process) or streamable HTTP.",
)
@click.option("--host", help="HTTP: interface to bind (default from config: 127.0.0.1).")
@click.option("--port", type=int, default=8766, show_default=True, help="HTTP: port.")
@click.option(
    "--key",
    envvar="EGOMEM_API_KEY",
    help="stdio: the tenant's API key (or EGOMEM_API_KEY); without it, the local store of --data-dir.",
)
@click.option(
    "--log-level",
    type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False),
    default="WARNING",
    show_default=True,
    help="What goes to stderr.",
)
@click.pass_obj
def mcp(c: _Ctx, transport: str, host: str | None, port: int, key: str | None, log_level: str) -> None:
    """Serve memory to agent frameworks over MCP: tools ask, search, remember, list_people."""
    from egomem.server.mcp import LogLevel, run_http, run_stdio

    level = cast(LogLevel, log_level.upper())  # one of the click.Choice above
    if transport == "stdio":
        run_stdio(c.config, key, level)
    else:
        run_http(c.config, host or c.config.server.host, port, level)
