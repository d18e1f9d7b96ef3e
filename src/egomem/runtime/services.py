"""The composition root: what the CLI, the server, MCP and the benchmarks run with, built once.

`Services(config, store, models)` holds the store, the shared models (`Models`: encoders, ASR,
trigger, voice), and builds on first use, once, the language model, the memory manager and the
answer model. Each component is handed only its own config section. An agent
(`runtime.build.build_agent`) is made from a `Services`; so are its per-stream parts (the
person identifier keeps the stream's recent voice polls, so each stream gets its own).
"""

from __future__ import annotations

import threading
from typing import Any

from egomem.config import Config
from egomem.llm.base import LLMProvider
from egomem.memory.config import MemoryConfig
from egomem.memory.manager import MemoryManager
from egomem.memory.rules_provider import RulesProvider
from egomem.memory.updater import Encoder
from egomem.providers import create
from egomem.runtime.models import Models
from egomem.store.base import MemoryStore


def memory_manager(config: MemoryConfig, store: MemoryStore, llm: LLMProvider, encoder: Encoder) -> MemoryManager:
    """The memory manager the agent runs: `llm` extracts (as its background passes run it:
    `llm.memory_threads`), `[memory] update_agent` plans updates."""
    llm = llm.for_memory()
    # A model's answer that fails validation is not retried forever: the rules answer that
    # session instead, and the episode records why (status done:fallback(<reason>)).
    fallback = None if isinstance(llm, RulesProvider) else RulesProvider()
    update = RulesProvider() if config.update_agent == "rules" else None
    return MemoryManager(store, llm, encoder, config, fallback=fallback, update_provider=update)


class Services:
    """`llm` / `manager`: ones already built (a server's shared model, a test's manager); None:
    built from the config on first use, once (thread-safe: device sessions start in threads)."""

    def __init__(
        self,
        config: Config,
        store: MemoryStore,
        models: Models | None = None,
        *,
        llm: LLMProvider | None = None,
        manager: MemoryManager | None = None,
    ) -> None:
        self.config, self.store = config, store
        self.models = models or Models(config)
        self._llm, self._manager = llm, manager
        self._lock = threading.RLock()

    @property
    def llm(self) -> LLMProvider:
        """The `llm` section's provider (extraction; answers too, unless it is the rules)."""
        with self._lock:
            if self._llm is None:
                self._llm = create("llm", self.config.llm, self.models.context)
            return self._llm

    @property
    def manager(self) -> MemoryManager:
        with self._lock:
            if self._manager is None:
                self._manager = memory_manager(self.config.memory, self.store, self.llm, self.models.text)
            return self._manager

    @property
    def answer_llm(self) -> LLMProvider | None:
        """The language model for answers: None when `[ask] llm` is off or only the rules
        provider is there (rules cannot answer questions)."""
        if not self.config.ask.llm:
            return None
        return None if self.llm.name == "rules" else self.llm

    def identifier(self) -> Any:
        """A person identifier over the store, for one stream (it aggregates that stream's polls)."""
        from egomem.identity.identifier import PersonIdentifier

        m = self.models
        return PersonIdentifier(
            self.store, self.config, face_encoder=m.face, voice_encoder=m.voice, cohort=m.voice_cohort
        )
