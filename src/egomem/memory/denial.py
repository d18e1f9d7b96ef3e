""" "That's not me": a person denying they are who the assistant took them for.

Said right after a greeting by the wrong name ("Hi Alex!" - "I'm not Alex", "you've got the wrong
person", "we've never met"), it is identity evidence against the matched user (runtime/unsure.py).
The patterns are deliberately narrow: a false denial only asks a name again, but "not me" inside an
ordinary sentence ("not me, my sister does") must not unseat anyone, so a bare "that's not me" counts
only as the whole utterance.
"""

from __future__ import annotations

import re

_WHOLE = re.compile(r"^(?:no[,.!]?\s*)?(?:that|it)(?:'s| is|s) not me[.!]?$|^(?:no[,.!]?\s*)?not me[.!]?$", re.I)
_ANYWHERE = re.compile(
    r"\b(?:you(?:'ve| have)? got the wrong person|wrong person"
    r"|you(?:'re| are) (?:thinking of|confusing me with) someone else"
    r"|(?:we've|we have) never met|we haven't met|we have not met)\b",
    re.I,
)


def denies_identity(text: str, name: str | None) -> bool:
    """Whether `text` denies being the person the assistant took the speaker for (named `name`)."""
    said = " ".join(text.strip().replace("\u2019", "'").split())
    if _WHOLE.match(said) or _ANYWHERE.search(said):
        return True
    if not name:
        return False
    who = re.escape(name.strip())
    return re.search(rf"\b(?:i'?m|i am|my name(?:'s| is)?) not {who}\b|\bmy name isn't {who}\b", said, re.I) is not None
