"""Token counting and clean truncation with a real word-piece tokenizer.

Budgets (Level-1 512, Level-2 256 tokens) are counted with the tokenizer that ships with
the text-embedding model unless another `tokenizer.json` is configured. The BERT
pre-tokenizer splits on whitespace, so the count of lines joined by newlines is the sum
of the lines' counts; renderers rely on that to fill a budget line by line.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Protocol

from egomem.errors import InputError


class TokenCounter(Protocol):
    def count_tokens(self, text: str) -> int: ...

    def truncate(self, text: str, budget: int) -> str: ...


class HFTokenCounter:
    """A `tokenizers` tokenizer loaded from a tokenizer.json file (lazily, thread-safe)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise InputError(f"tokenizer file not found: {self.path}")
        self._tok: Any = None
        self._lock = threading.Lock()

    @property
    def tokenizer(self) -> Any:
        if self._tok is None:
            with self._lock:
                if self._tok is None:
                    from tokenizers import Tokenizer

                    tok = Tokenizer.from_file(str(self.path))
                    tok.no_padding()
                    tok.no_truncation()
                    self._tok = tok
        return self._tok

    def count_tokens(self, text: str) -> int:
        """Tokens of `text` without special tokens ([CLS]/[SEP])."""
        if not text:
            return 0
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids)

    def truncate(self, text: str, budget: int) -> str:
        """The longest prefix of `text` within `budget` tokens that ends at a word boundary."""
        if budget <= 0 or not text:
            return ""
        enc = self.tokenizer.encode(text, add_special_tokens=False)
        if len(enc.ids) <= budget:
            return text
        # Cut where token `budget` starts, then back off to whitespace so that a word
        # split into several word pieces is never left half.
        cut = enc.offsets[budget][0]
        head = text[:cut]
        if not text[cut].isspace() and head and not head[-1].isspace():
            space = max(head.rfind(" "), head.rfind("\n"))
            head = head[:space] if space > 0 else ""
        return head.rstrip()
