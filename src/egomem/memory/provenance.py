"""Where each fact and relation comes from: the user turns it was said in and the identity decision
that put it on its person (status and fused LLR), so that a split (store/ops/repair.py) can move
exactly what belongs to another person and a reader can see why an item sits where it does."""

from __future__ import annotations

from egomem.identity.types import Identification
from egomem.memory.items import SessionText, Turn
from egomem.schemas import Provenance


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def turns_of(session: SessionText, source_text: str) -> list[Turn]:
    """The user turns the utterance `source_text` was taken from (containing it, or contained in it:
    an extractor may quote one sentence of a turn or join two); all user turns when none matches."""
    said = _norm(source_text)
    turns = session.user_turns()
    hits = [t for t in turns if said and (said in _norm(t.text) or _norm(t.text) in said)]
    return hits or turns


def provenance(session: SessionText, ident: Identification | None, source_text: str) -> Provenance:
    """The provenance of an item said as `source_text` in `session`, whose speaker was decided by `ident`
    (None: a session without a face/voice decision, e.g. a written transcript matched by name)."""
    spans = [
        [float(t.start), float(t.end)]
        for t in turns_of(session, source_text)
        if t.start is not None and t.end is not None
    ]
    return Provenance(
        source_turns=spans or None,
        identity_status=None if ident is None else ident.status.value,
        identity_llr=None if ident is None else ident.llr,
    )
