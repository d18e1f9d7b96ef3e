"""BM25 (bm25s) over a small in-memory corpus, with English stop words and Snowball stems.

bm25s tokenises with a word regex; stemming makes "loves"/"love" and
"colleagues"/"colleague" meet. An empty corpus or a query with no known term gives
all-zero scores rather than an error.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

_WORD = re.compile(r"(?u)\b\w+\b")
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
        "i",
        "me",
        "my",
        "we",
        "our",
        "you",
        "your",
        "he",
        "him",
        "his",
        "she",
        "her",
        "its",
        "do",
        "does",
        "did",
        "have",
        "has",
        "had",
        "what",
        "which",
        "who",
        "whom",
        "when",
        "where",
        "why",
        "how",
        "any",
        "all",
        "can",
        "could",
        "would",
        "should",
        "am",
        "been",
        "being",
        "so",
        "than",
        "too",
        "very",
        "just",
        "about",
    ]
)


class _Stems:
    """Snowball English stemmer from PyStemmer, with a memo: the same words recur a lot."""

    def __init__(self) -> None:
        import Stemmer

        self._stemmer: Any = Stemmer.Stemmer("english")
        self._memo: dict[str, str] = {}

    def __call__(self, word: str) -> str:
        s = self._memo.get(word)
        if s is None:
            s = self._stemmer.stemWord(word)
            self._memo[word] = s
        return s


_STEMS: _Stems | None = None


def analyze(text: str) -> list[str]:
    """Lower-cased, stop-word-free, stemmed terms of `text`."""
    global _STEMS
    if _STEMS is None:
        _STEMS = _Stems()
    return [_STEMS(w) for w in _WORD.findall(text.lower()) if w not in _STOP]


class BM25Index:
    def __init__(self, docs: Sequence[str], *, k1: float = 1.2, b: float = 0.75) -> None:
        import bm25s

        self.size = len(docs)
        self._retriever: Any = None
        self._vocab: set[str] = set()
        if not docs:
            return
        corpus = [analyze(d) for d in docs]
        self._vocab = {t for doc in corpus for t in doc}
        # bm25s needs at least one token per document; an empty doc gets a placeholder.
        corpus = [doc or ["\x00"] for doc in corpus]
        self._retriever = bm25s.BM25(k1=k1, b=b)
        self._retriever.index(corpus, show_progress=False)

    def scores(self, query: str | Sequence[str]) -> np.ndarray:
        """BM25 score of every document for `query` (text, or a list of phrases)."""
        if self._retriever is None:
            return np.zeros(self.size, dtype=np.float32)
        text = query if isinstance(query, str) else " ".join(query)
        terms = [t for t in analyze(text) if t in self._vocab]
        if not terms:
            return np.zeros(self.size, dtype=np.float32)
        return np.asarray(self._retriever.get_scores(terms), dtype=np.float32)
