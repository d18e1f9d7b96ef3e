"""A session too long for the model's context, cut into pieces that fit (memory/extractor.py).

A 30-minute monologue is some 4,500 words: with the extraction prompt and room for the answer it
does not fit the local model's 4,096 tokens, and the model's pass used to fail on it and leave the
session to the rules. The extractor now halves a session whose prompt does not fit (or one
longer than `memory.model_piece_words`, when set), and halves again while a half is still too
long: the cut falls between turns where the session has several, else between the one turn's
sentences, else between its words (an ASR loop writes no full stops). Each piece keeps
the session's date, name and id, so its items are written as the whole session's. The pieces'
items are joined: one summary for the episode (theirs in order), one copy of an item two pieces
both gave.
"""

from __future__ import annotations

from egomem.memory.compact import sentences
from egomem.memory.items import ExtractedItem, SessionText, Turn, clip


def words(session: SessionText) -> int:
    return sum(len(t.text.split()) for t in session.turns)


def halves(session: SessionText) -> tuple[SessionText, SessionText] | None:
    """The session's first and second halves by length of text; None when it is one word."""
    turns = [t for t in session.turns if t.text.strip()]
    if len(turns) == 1:
        parts = _halve_turn(turns[0])
        if parts is None:
            return None
        first, second = [parts[0]], [parts[1]]
    elif len(turns) > 1:
        cut = _middle(turns)
        first, second = turns[:cut], turns[cut:]
    else:
        return None
    return session.model_copy(update={"turns": first}), session.model_copy(update={"turns": second})


def _middle(turns: list[Turn]) -> int:
    """The turn boundary nearest half the text (both sides non-empty)."""
    total = sum(len(t.text) for t in turns)
    seen = 0
    for i, t in enumerate(turns[:-1], start=1):
        seen += len(t.text)
        if seen * 2 >= total:
            return i
    return len(turns) - 1


def _halve_turn(turn: Turn) -> tuple[Turn, Turn] | None:
    units = sentences(turn.text)
    if len(units) < 2:
        units = turn.text.split()
    if len(units) < 2:
        return None
    cut = _middle([turn.model_copy(update={"text": u}) for u in units])
    return (
        turn.model_copy(update={"text": " ".join(units[:cut])}),
        turn.model_copy(update={"text": " ".join(units[cut:])}),
    )


def join(pieces: list[list[ExtractedItem]]) -> list[ExtractedItem]:
    """The items of a session's pieces as one session's: the summaries joined into one (in the
    pieces' order), and an item given by two pieces kept once."""
    items: list[ExtractedItem] = []
    seen: set[tuple[object, ...]] = set()
    summaries: list[ExtractedItem] = []
    for piece in pieces:
        for it in piece:
            if it.kind == "summary":
                summaries.append(it)
                continue
            key = (it.kind, it.text.strip().lower(), it.person.strip().lower(), it.relation, it.retract)
            if key not in seen:
                seen.add(key)
                items.append(it)
    if summaries:
        text = clip(" ".join(s.text.strip() for s in summaries))
        items.append(summaries[0].model_copy(update={"text": text}))
    return items
