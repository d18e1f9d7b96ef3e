"""Remember one stated fact about a person, through the memory update agent.

What an agent framework tells memory ("Anna is allergic to nuts") goes the way a
conversation's items go: the update agent (`MemoryUpdater`, `[memory] update_agent`)
decides ADD / UPDATE (superseding, history kept) / NOOP against what the person's facts
already say, and the write is one transaction with its history rows. A small episode
records when and through what it was said (the facts' `source_episode`; the words are
the facts' `source_text`). A person not known by that name becomes a placeholder user
(named, never seen), as people talked about in conversation do.
"""

from __future__ import annotations

from dataclasses import dataclass

from egomem.config import Config
from egomem.errors import InputError, NotFoundError
from egomem.llm import create_provider
from egomem.llm.base import LLMProvider
from egomem.memory.items import ExtractedItem
from egomem.memory.rules_provider import RulesProvider
from egomem.memory.updater import Encoder, MemoryUpdater
from egomem.providers import BuildContext
from egomem.schemas import Episode, User, now
from egomem.store.base import MemoryStore

MAX_FACT_CHARS = 1000


@dataclass(frozen=True)
class Remembered:
    user: User
    created_person: bool
    episode_id: str
    ops: list[tuple[str, str, str]]  # (ADD | UPDATE | NOOP | DELETE, fact id, text)


def find_person(store: MemoryStore, person: str) -> User | None:
    """A user by id, else by name (None when nobody; InputError when several share the name)."""
    try:
        return store.get_user(person)
    except NotFoundError:
        pass
    named = store.find_users_by_name(person)
    real = [u for u in named if not u.placeholder] or named
    if len(real) > 1:
        raise InputError(f"{len(real)} people are called {person!r}; give a user id")
    return real[0] if real else None


def remember_fact(
    store: MemoryStore,
    person: str,
    text: str,
    encoder: Encoder,
    config: Config,
    *,
    kind: str = "fact",
    source: str = "api",
    provider: LLMProvider | None = None,
) -> Remembered:
    """Decide and write `text` ("likes green tea") about `person` (a user id or a name)."""
    text, person = " ".join(text.split()), " ".join(person.split())
    if not text or len(text) > MAX_FACT_CHARS:
        raise InputError(f"a fact is 1-{MAX_FACT_CHARS} characters")
    if not person:
        raise InputError("say whom the fact is about (a user id or a name)")
    if kind not in ("fact", "preference"):
        raise InputError("kind is 'fact' or 'preference'")
    item = ExtractedItem(kind="fact" if kind == "fact" else "preference", text=text, source_text=text)
    cause = f"{source} remember"
    user = find_person(store, person)
    agent = provider or (RulesProvider() if config.memory.update_agent == "rules" else _llm(config))
    updater = MemoryUpdater(store, agent, encoder, config.memory)
    plan = updater.plan(user.id if user else None, user.name if user else person, [item])  # reads only
    at = now()
    with store.transaction():
        created = user is None
        if user is None:
            user = store.create_user(person, placeholder=True, cause=f"{cause}: a person named, never met")
        episode = Episode(start=at, end=at, participants=[user.id], status="done")
        store.add_episode(episode, cause=f"{cause}: what {source} said about {user.name or user.id}")
        applied = updater.apply(user.id, [item], plan, episode_id=episode.id, at=at, cause=cause)
    return Remembered(user, created, episode.id, applied.ops)


def _llm(config: Config) -> LLMProvider:
    return create_provider(config.llm, BuildContext(config.data_dir))
