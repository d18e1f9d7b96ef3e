"""ASR text is lower-case, but names are how the extractor recognises people ("John is
my colleague" vs "tennis is my passion"). Before extraction, user turns get "I" and
the names memory already knows restored to their case: contextual, like a person
who knows their friends' names hears them in a sentence."""

from __future__ import annotations

import re
from collections.abc import Iterable

_I = re.compile(r"\bi(?=$|\s|'m|'ve|'d|'ll)")


def truecase(text: str, names: Iterable[str]) -> str:
    """Capitalise 'i' and every known name (whole words, any case) in `text`."""
    if not text:
        return text
    out = _I.sub("I", text)
    for name in sorted({n for n in names if n and n.strip()}, key=len, reverse=True):
        out = re.sub(rf"\b{re.escape(name)}\b", name, out, flags=re.IGNORECASE)
    return out[:1].upper() + out[1:] if out[:1].islower() else out
