"""What can be kept of a JSON answer that stopped part-way.

A local model's answer can end before its JSON closes: it looped and was stopped (llm/loops.py)
or it ran out of tokens. On a long session the items written before that are often most of the
answer, and throwing them all away leaves the whole session to the rules. For a schema whose
answer is a list that may be cut short (a `PREFIX_IS_ANSWER` schema: the extracted items), the
complete elements written so far are a smaller answer of the same kind, never a different one:
`closed_prefixes` gives the answer cut after each complete element of an array, closed, the
longest first, and the caller keeps the first that validates.
"""

from __future__ import annotations

from collections.abc import Iterator

_CLOSER = {"{": "}", "[": "]"}


def closed_prefixes(text: str) -> Iterator[str]:
    """`text` cut just after each complete object or array that is an element of an array, with
    the containers still open then closed, from the longest cut to the shortest. Text after a
    bracket that closes nothing is not looked at (it is no JSON prefix)."""
    stack: list[str] = []
    cuts: list[str] = []
    in_string = escaped = False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in _CLOSER:
            stack.append(ch)
        elif ch in "}]":
            if not stack or _CLOSER[stack[-1]] != ch:
                break
            stack.pop()
            if stack and stack[-1] == "[":
                cuts.append(text[: i + 1] + "".join(_CLOSER[c] for c in reversed(stack)))
    yield from reversed(cuts)
