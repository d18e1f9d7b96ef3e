"""Streaming parser for the dialog model's Level-2 query.

The model writes `<retr>:\n<relation words, comma separated>\n<keywords, comma separated><answer>`
into its text channel, one token at a time. Tokens may split the tags anywhere, so the
parser keeps a small buffer and matches on the joined text. A query without `<answer>`
that runs past `max_query_chars`, or a new `<retr>` before the old one closed, is
dropped (truncated query), never raised: the model's text is not ours to validate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

OPEN = "<retr>"
CLOSE = "<answer>"
MAX_TERMS = 32  # "thousands of commas" must not become thousands of empty terms


@dataclass(frozen=True)
class RetrQuery:
    relation_words: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.relation_words and not self.keywords


def split_terms(group: str, limit: int = MAX_TERMS) -> list[str]:
    """Comma-separated words -> de-duplicated, stripped, non-empty terms (at most `limit`)."""
    out: list[str] = []
    seen: set[str] = set()
    for raw in group.split(","):
        term = " ".join(raw.split())
        if term and term.lower() not in seen:
            seen.add(term.lower())
            out.append(term)
            if len(out) >= limit:
                break
    return out


def split_monologue(text: str) -> tuple[str | None, str]:
    """A finished monologue -> (what came before `<answer>`: the query, or None when there
    was none; what is said aloud: the text after `<answer>`, or all of it)."""
    if CLOSE not in text:
        return None, text
    query, said = text.split(CLOSE, 1)
    return query, said


def parse_query(body: str) -> RetrQuery:
    """Parse the text between `<retr>` and `<answer>`.

    Line 1 (after an optional ':'): relation words; line 2: keywords. A body on one line
    holds relation words only. Extra lines are joined into the keywords.
    """
    body = body.lstrip()
    if body.startswith(":"):
        body = body[1:]
    lines = [ln for ln in re.split(r"\r?\n", body)]
    # The format starts with a newline after ':'; drop that one leading empty line only.
    if lines and not lines[0].strip() and len(lines) > 1:
        lines = lines[1:]
    relations = split_terms(lines[0]) if lines else []
    keywords = split_terms(",".join(lines[1:])) if len(lines) > 1 else []
    return RetrQuery(relations, keywords)


class RetrParser:
    """Feed model text token by token; `feed` returns a RetrQuery when one completes."""

    def __init__(self, max_query_chars: int = 2000) -> None:
        self.max_query_chars = max_query_chars
        self._buf = ""
        self._in_query = False
        self.dropped = 0  # truncated or overlong queries that were discarded

    @property
    def in_query(self) -> bool:
        return self._in_query

    def reset(self) -> None:
        self._buf = ""
        self._in_query = False

    def feed(self, token: str) -> list[RetrQuery]:
        """Consume one chunk of text; returns the queries it completed (usually none)."""
        if not isinstance(token, str) or not token:
            return []
        self._buf += token
        done: list[RetrQuery] = []
        while True:
            if not self._in_query:
                i = self._buf.find(OPEN)
                if i < 0:
                    # Keep only a tail that could be the start of "<retr>".
                    self._buf = self._keep_prefix_tail(self._buf, OPEN)
                    return done
                self._buf = self._buf[i + len(OPEN) :]
                self._in_query = True
            j = self._buf.find(CLOSE)
            k = self._buf.find(OPEN)
            if k >= 0 and (j < 0 or k < j):
                self.dropped += 1  # a new query began before the old one closed
                self._buf = self._buf[k:]
                self._in_query = False
                continue
            if j < 0:
                if len(self._buf) > self.max_query_chars:
                    self.dropped += 1
                    self._buf = ""
                    self._in_query = False
                return done
            done.append(parse_query(self._buf[:j]))
            self._buf = self._buf[j + len(CLOSE) :]
            self._in_query = False

    @staticmethod
    def _keep_prefix_tail(text: str, tag: str) -> str:
        for n in range(min(len(tag) - 1, len(text)), 0, -1):
            if tag.startswith(text[-n:]):
                return text[-n:]
        return ""
