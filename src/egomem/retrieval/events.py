"""MemChunk update events and a small synchronous subscription bus.

The runtime routes `MemChunkUpdated` to the dialog model, which refreshes its KV cache
once per event; so events are emitted only when a chunk really changes.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from egomem.schemas import MemChunk

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MemChunkUpdated:
    level: int  # 1: profile of the current user; 2: facts retrieved for a <retr> query
    text: str
    tokens: int
    user_id: str | None
    at: float

    @classmethod
    def of(cls, chunk: MemChunk) -> MemChunkUpdated:
        return cls(chunk.level, chunk.text, chunk.tokens, chunk.user_id, chunk.at)


Listener = Callable[[MemChunkUpdated], None]


class EventBus:
    """Calls every listener in subscription order. A failing listener is logged and
    skipped so one bad consumer cannot stop the retrieval process."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._lock = threading.Lock()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Add a listener; returns a function that removes it."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def emit(self, event: MemChunkUpdated) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for fn in listeners:
            try:
                fn(event)
            except Exception:  # a consumer's bug must not kill polling
                log.exception("MemChunkUpdated listener failed")
