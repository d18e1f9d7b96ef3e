"""The memory extractor: one finished session's text in, provenance-checked items out.

The backend (rules, OpenAI-compatible, GGUF) answers the `extract` task; this module
refuses what a model may invent: an item whose quoted source is not in the user's own
words is dropped (and reported), so no fact reaches memory without provenance.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from egomem.llm.base import LLMProvider
from egomem.memory.items import ExtractedItem, Extraction, SessionText


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w']+", " ", text.lower().replace("’", "'")).split())


@dataclass
class ExtractResult:
    items: list[ExtractedItem]
    dropped: list[tuple[ExtractedItem, str]] = field(default_factory=list)  # (item, why)


class MemoryExtractor:
    def __init__(self, provider: LLMProvider) -> None:
        self.provider = provider

    def extract(self, session: SessionText) -> ExtractResult:
        """Raises LLMError when the backend fails; an empty session gives no items."""
        turns = session.user_turns()
        if not turns:
            return ExtractResult(items=[])
        out = self.provider.run("extract", session, Extraction)
        user_text = _norm(" ".join(t.text for t in turns))
        kept: list[ExtractedItem] = []
        dropped: list[tuple[ExtractedItem, str]] = []
        for it in out.items:
            if it.kind == "summary":
                # A summary speaks for the whole session: its provenance is the transcript.
                kept.append(it.model_copy(update={"source_text": " ".join(t.text.strip() for t in turns)[:2000]}))
            elif not _norm(it.source_text) or _norm(it.source_text) not in user_text:
                dropped.append((it, "source_text is not in the user's utterances"))
            elif it.kind == "relation" and not (it.person.strip() and it.relation.strip()):
                dropped.append((it, "relation without person or relation word"))
            else:
                kept.append(it)
        return ExtractResult(items=kept, dropped=dropped)
