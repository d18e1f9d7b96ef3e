"""Text tokenizers for the monologue and MemChunk tokens: built-in words or bytes, or a
Hugging Face `tokenizers` JSON file (the dialog model's own vocabulary).

Every tokenizer has the same special tokens: `<pad>` (a step with no text), `<retr>` and
`<answer>` (the Level-2 query frame `<retr>:\\n<relation words>\\n<keywords><answer>`),
and, for the built-ins, `\\n` kept as its own token so the query's lines survive.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Protocol

from egomem.errors import InputError

PAD, RETR, ANSWER, UNK = "<pad>", "<retr>", "<answer>", "<unk>"
SPECIALS = (PAD, RETR, ANSWER, UNK)
_SPECIAL_RE = re.compile("(" + "|".join(re.escape(s) for s in SPECIALS) + ")")
_WORD_RE = re.compile(r"\n|[^\s]+")


class TextTokenizer(Protocol):
    name: str

    @property
    def vocab_size(self) -> int: ...

    def id_of(self, special: str) -> int:
        """The id of one of SPECIALS."""
        ...

    def encode(self, text: str) -> list[int]:
        """Token ids of `text`; special-token strings in it become their ids."""
        ...

    def to_json(self) -> dict[str, object]:
        """What a reader needs to decode the ids (written beside the shards)."""
        ...


def _pieces(text: str) -> list[tuple[bool, str]]:
    return [(p in SPECIALS, p) for p in _SPECIAL_RE.split(text) if p]


class ByteTokenizer:
    """UTF-8 bytes after the specials: no vocabulary to carry, about 5 tokens a word."""

    name = "bytes"

    @property
    def vocab_size(self) -> int:
        return len(SPECIALS) + 256

    def id_of(self, special: str) -> int:
        return SPECIALS.index(special)

    def encode(self, text: str) -> list[int]:
        out: list[int] = []
        for special, piece in _pieces(text):
            out += [self.id_of(piece)] if special else [len(SPECIALS) + b for b in piece.encode("utf-8")]
        return out

    def to_json(self) -> dict[str, object]:
        return {"kind": self.name, "specials": list(SPECIALS)}


class WordTokenizer:
    """Whitespace words (and `\\n`), the vocabulary built from the script's own text so the
    ids are stable for one script; a word outside it is `<unk>`."""

    name = "words"

    def __init__(self, vocab: list[str]) -> None:
        # "\n" always has an id: the query frame needs it whatever the script says
        self.vocab = [*SPECIALS, "\n", *(w for w in vocab if w not in (*SPECIALS, "\n"))]
        self._ids = {w: i for i, w in enumerate(self.vocab)}

    @classmethod
    def from_texts(cls, texts: list[str]) -> WordTokenizer:
        words = {w for t in texts for special, p in _pieces(t) if not special for w in _WORD_RE.findall(p)}
        return cls(sorted(words))

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def id_of(self, special: str) -> int:
        return self._ids[special]

    def encode(self, text: str) -> list[int]:
        out: list[int] = []
        unk = self._ids[UNK]
        for special, piece in _pieces(text):
            out += [self._ids[piece]] if special else [self._ids.get(w, unk) for w in _WORD_RE.findall(piece)]
        return out

    def to_json(self) -> dict[str, object]:
        return {"kind": self.name, "vocab": self.vocab}


class HFTokenizer:
    """A `tokenizers` JSON file (the dialog model's vocabulary); the specials are added to it."""

    name = "hf"

    def __init__(self, path: Path) -> None:
        try:
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise InputError("a tokenizer JSON needs the `tokenizers` package") from exc
        try:
            self._tok = Tokenizer.from_file(str(path))
        except Exception as exc:  # the library raises its own Exception types for bad files
            raise InputError(f"cannot load tokenizer {path}: {exc}") from exc
        self._tok.add_special_tokens(list(SPECIALS))
        self.path = path

    @property
    def vocab_size(self) -> int:
        return int(self._tok.get_vocab_size(with_added_tokens=True))

    def id_of(self, special: str) -> int:
        i = self._tok.token_to_id(special)
        assert i is not None  # added in __init__
        return int(i)

    def encode(self, text: str) -> list[int]:
        return list(self._tok.encode(text, add_special_tokens=False).ids)

    def to_json(self) -> dict[str, object]:
        return {"kind": self.name, "path": str(self.path), "specials": {s: self.id_of(s) for s in SPECIALS}}


def make_text_tokenizer(kind: str, texts: list[str]) -> TextTokenizer:
    """`words` (default), `bytes`, or the path of a tokenizers JSON file."""
    if kind == "words":
        return WordTokenizer.from_texts(texts)
    if kind == "bytes":
        return ByteTokenizer()
    path = Path(kind)
    if path.suffix == ".json" and path.is_file():
        return HFTokenizer(path)
    raise InputError(f"text tokenizer {kind!r}: not `words`, `bytes` nor a tokenizers .json file")


def save_tokenizer(tok: TextTokenizer, out: Path) -> None:
    out.write_text(json.dumps(tok.to_json(), ensure_ascii=False), encoding="utf-8")
