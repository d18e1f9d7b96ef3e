"""The interface a full-duplex dialog model implements to work with egomem.

The agent drives the model with three kinds of input and reads one kind of output:

- `on_memchunk(chunk)`: a Level-1 (profile) or Level-2 (related people) MemChunk
  changed; the model refreshes the memory part of its context (its KV cache) now.
- `on_step(step)`: every 80 ms step of the stream (raw listening audio, video).
  A native duplex model consumes it; a cascaded model ignores it.
- `on_user_turn(turn)`: a finished user utterance, transcribed (cascaded models).
- `proactive(t)`: speech the model starts on its own, e.g. greeting a user who
  just appeared.

Output is the model's monologue text, yielded token by token. The agent feeds
each token to the `<retr>` query parser before asking for the next one, and when a
query completes it calls `on_memchunk` with the new Level-2 chunk — so by the time
the model yields the token after `<answer>`, the retrieved facts are in its context.
"""

from __future__ import annotations

import abc
from collections.abc import Iterator
from dataclasses import dataclass

from egomem.schemas import MemChunk
from egomem.stream.sources import Step


@dataclass(frozen=True)
class UserTurn:
    text: str
    start: float  # stream seconds
    end: float
    user_id: str | None = None


class DuplexModel(abc.ABC):
    name: str = "duplex model"

    @abc.abstractmethod
    def on_memchunk(self, chunk: MemChunk) -> None:
        """A MemChunk changed: refresh the model's memory context (KV cache) now."""

    def on_step(self, step: Step) -> None:  # noqa: B027 - optional hook, cascaded models ignore it
        """Raw 80 ms step (listening audio, frames); for native full-duplex models."""

    @abc.abstractmethod
    def on_user_turn(self, turn: UserTurn) -> Iterator[str]:
        """Respond to a finished user turn; yield monologue tokens (may include a <retr> query)."""

    def proactive(self, t: float) -> Iterator[str]:
        """Speech the model starts by itself at stream time t (default: none)."""
        return iter(())
