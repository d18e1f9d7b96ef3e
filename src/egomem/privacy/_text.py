"""Shared text helpers for the privacy readers: normalising a turn, quotes and jokes."""

from __future__ import annotations

import re

_QUOTES = "\"'“”‘’«»"
# Words that report someone else's words: "she said forget me", "he told me to forget him".
REPORTING = r"(?:said|says|saying|told|tells|asked|asks|wrote|writes|goes|went|was like|sang|sings)"
# A turn that ends in (or holds) one of these is said in jest, not meant.
_JOKE = re.compile(
    r"\b(?:just kidding|only kidding|kidding|joking|just joking|jk|lol|haha+|hehe+|not really|i'm messing with you)\b"
)


def normalise(text: str) -> str:
    """Lower case, typographic apostrophes made plain, whitespace collapsed."""
    return " ".join(text.replace("’", "'").replace("‘", "'").lower().split())


def without_quotes(text: str) -> str:
    """The turn with every quoted passage removed: what is inside quotes is someone's words, not a request."""
    out = re.sub(r"[\"“”«»][^\"“”«»]*[\"“”«»]", " ", text)
    # Single quotes only where they open after a space and close before one (never an apostrophe).
    return re.sub(r"(?:^|\s)['‘][^'‘’]+['’](?=\s|$|[.,!?])", " ", out)


def is_joke(text: str) -> bool:
    return _JOKE.search(normalise(text)) is not None


def has_quote_marks(text: str) -> bool:
    return any(q in text for q in _QUOTES if q not in "'’‘")
