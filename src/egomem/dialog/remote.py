"""A dialog model that runs elsewhere (on the robot): egomem only sends it MemChunks.

Used by the network service when the client brings its own model: MemChunk updates go
out as events, the client's monologue comes back as MONOLOGUE frames and what it said
as ASSISTANT_TEXT (or SPEAK audio).
"""

from __future__ import annotations

from collections.abc import Iterator

from egomem.dialog.base import DuplexModel, UserTurn
from egomem.schemas import MemChunk


class RemoteModel(DuplexModel):
    name = "remote model (client side)"

    def __init__(self) -> None:
        self.chunks: list[MemChunk] = []

    def on_memchunk(self, chunk: MemChunk) -> None:
        self.chunks.append(chunk)  # delivered to the client by the session's event stream

    def on_user_turn(self, turn: UserTurn) -> Iterator[str]:
        return iter(())  # the client's model answers on the robot
