"""The memory extractor: one finished session's text in, provenance-checked items out.

The backend (rules, OpenAI-compatible, GGUF) answers the `extract` task; this module
refuses what a model may invent, and reports each drop: an item whose quoted source is
not in the user's own words, or is a question; a person, name, or any capitalised word or
number in an item that the user never said ("lives in Lisbon" quoting "I live in Porto"); a
name for the user that cased text does not write as a name ("operator" in "I work as an operator").
So no fact reaches memory without provenance. Before that, memory/about_person.py drops or
rewrites what is about the assistant instead of the person, and turns a wish said as a liking
into the plan it is (`ExtractResult.checked`).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Literal

from egomem.llm.base import ChatProvider, LLMError, LLMProvider, PromptTooLong, transient
from egomem.memory import pieces
from egomem.memory.about_person import Checked, check_items
from egomem.memory.compact import CompactExtraction, compact_session, expand
from egomem.memory.gate import worth_a_model
from egomem.memory.items import ExtractedItem, Extraction, SessionText
from egomem.memory.names import COMMON, NameJudge, is_cased
from egomem.memory.statements import is_question
from egomem.relations import is_relation_word


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w']+", " ", text.lower().replace("’", "'")).split())


log = logging.getLogger(__name__)


@dataclass
class ExtractResult:
    items: list[ExtractedItem]
    dropped: list[tuple[ExtractedItem, str]] = field(default_factory=list)  # (item, why)
    checked: list[Checked] = field(default_factory=list)  # rewritten or dropped: about the assistant, wishes
    gated: bool = False  # the model was not asked: nothing personal in the session (memory/gate.py)


class MemoryExtractor:
    """`supplement` (the rules, beside a language model) adds what the model missed: the
    rules are written to be sound, the 1.5B model misses changes ("we moved to Paris")
    and goals; each item of either still passes the same provenance checks below.

    `schema`: what a chat model is asked to write, "full" (memory/items.py) or "short"
    (memory/compact.py: short keys, sources by line number); the rules write items directly.
    `gate`: with a supplement, a session with nothing personal in it (memory/gate.py) is left to
    the supplement alone, without the model."""

    def __init__(
        self,
        provider: LLMProvider,
        supplement: LLMProvider | None = None,
        *,
        schema: Literal["full", "short"] = "full",
        gate: bool = False,
        piece_words: int = 0,
    ) -> None:
        self.provider = provider
        self.supplement = supplement
        self.schema = schema
        self.gate = gate
        self.piece_words = piece_words

    def _model_items(self, session: SessionText) -> list[ExtractedItem]:
        """The model's items. A session too long for the model's context, or longer than
        `piece_words` (0: no such cap), is asked about in pieces (memory/pieces.py); a piece the
        model answers with garbage (a loop) is left to the rules, the others' items stand."""
        too_long = 0 < self.piece_words < pieces.words(session)
        parts = pieces.halves(session) if too_long else None
        if parts is None:
            try:
                return self._model_items_once(session)
            except PromptTooLong as exc:
                parts = pieces.halves(session)
                if parts is None:
                    raise
                log.info("session %s: too long for the model (%s): asked in halves", session.episode_id, exc.detail)
        answers: list[list[ExtractedItem]] = []
        failed: LLMError | None = None
        for part in parts:
            if not part.user_turns():
                continue
            try:
                answers.append(self._model_items(part))
            except LLMError as exc:
                if transient(exc):
                    raise  # the model is down: the whole session waits for it
                log.warning("session %s: a piece left to the rules: %s", session.episode_id, exc)
                failed = exc
        if not answers and failed is not None:
            raise failed
        return pieces.join(answers)

    def _model_items_once(self, session: SessionText) -> list[ExtractedItem]:
        if self.schema == "short" and isinstance(self.provider, ChatProvider):
            payload, said = compact_session(session)
            items, bad = expand(self.provider.run("extract_short", payload, CompactExtraction), said)
            for c in bad:
                log.info("session %s: %r dropped: line %d is not the user's", session.episode_id, c.t, c.s)
            return items
        return list(self.provider.run("extract", session, Extraction).items)

    def _supplement_items(self, session: SessionText) -> list[ExtractedItem] | None:
        if self.supplement is None:
            return None
        try:
            return list(self.supplement.run("extract", session, Extraction).items)
        except LLMError as exc:  # the model's items stand on their own
            log.warning("session %s: supplementary extraction failed: %s", session.episode_id, exc)
            return None

    def extract(self, session: SessionText) -> ExtractResult:
        """Raises LLMError when the backend fails; an empty session gives no items."""
        turns = session.user_turns()
        if not turns:
            return ExtractResult(items=[])
        supplement = self._supplement_items(session)
        gated = self.gate and supplement is not None and not worth_a_model(session, supplement)
        unnamed: list[tuple[ExtractedItem, str]] = []  # model names without a name's evidence
        if gated:
            assert supplement is not None
            items, checked = check_items(supplement, session)
            log.info("session %s: nothing personal, the model was not asked", session.episode_id)
        else:
            items, checked = check_items(self._model_items(session), session)
            # Before the rules' items are merged in: a model name refused here leaves room for theirs.
            items, unnamed = _names_in_evidence(items, session)
            if supplement is not None:
                extra, checked_extra = check_items(supplement, session)
                items += _not_covered(extra, items)
                checked += checked_extra
        for c in checked:
            log.info(
                "session %s: %r %s: %s",
                session.episode_id,
                c.item.text,
                "dropped" if c.replaced_by is None else f"-> {c.replaced_by.text!r}",
                c.why,
            )
        user_text = _norm(" ".join(t.text for t in turns))
        kept: list[ExtractedItem] = []
        dropped: list[tuple[ExtractedItem, str]] = unnamed
        for it in items:
            if it.kind == "summary":
                # A summary speaks for the whole session: its provenance is the transcript.
                kept.append(it.model_copy(update={"source_text": " ".join(t.text.strip() for t in turns)[:2000]}))
            elif not _norm(it.source_text) or _norm(it.source_text) not in user_text:
                dropped.append((it, "source_text is not in the user's utterances"))
            elif it.kind == "relation" and not (it.person.strip() and it.relation.strip()):
                dropped.append((it, "relation without person or relation word"))
            elif why := _unsupported(it, user_text):
                dropped.append((it, why))
            else:
                kept.append(it)
        return ExtractResult(items=kept, dropped=dropped, checked=checked, gated=gated)


def _names_in_evidence(
    items: list[ExtractedItem], session: SessionText
) -> tuple[list[ExtractedItem], list[tuple[ExtractedItem, str]]]:
    """A model's name for the user must meet the rules' bar for a name (memory/names.py), because a
    name moves the session: a name other than the matched user's makes it another person's
    (MemoryManager._speaker). In cased text (Whisper's) each word of the name must be written with
    a capital where the case is evidence, i.e. not only at the start of a sentence, unless memory
    or the first-name lexicon knows it: "I work as an operator" never names anyone "Operator".
    Lower-case text carries no such evidence and is left to `_unsupported`'s checks."""
    turns = [t.text.strip() for t in session.user_turns()]
    if not is_cased(" ".join(turns)):
        return items, []
    judge = NameJudge.of_session(session)
    kept, dropped = [], []
    for it in items:
        bad = [w for w in it.text.split() if it.kind == "name" and not _written_as_name(w, turns, judge)]
        if bad:
            dropped.append((it, f"{bad[0]!r} is not written as a name"))
        else:
            kept.append(it)
    return kept, dropped


def _written_as_name(word: str, turns: list[str], judge: NameJudge) -> bool:
    w = word.strip(".,!?;:'\"")
    w = w[:1].upper() + w[1:]
    if not judge.accepts(w, cased=True, strong=True):
        return False  # a common word, a nationality, a film character, or not a word
    if judge.accepts(w, cased=False, strong=False):
        return True  # memory or the first-name lexicon knows it
    for text in turns:
        for m in re.finditer(rf"\b{re.escape(w)}(?:'s)?\b", text):
            before = text[: m.start()].rstrip()
            if before and before[-1] not in '.!?:"“':
                return True
    return False


def _not_covered(extra: list[ExtractedItem], items: list[ExtractedItem]) -> list[ExtractedItem]:
    """Items of `extra` that say something `items` do not: no second name or summary, and
    no item whose words all appear in one item of the same kind ("loves tennis" is in
    "loves playing tennis"). A change or retraction counts unless the items already retract
    the same words: it closes an old fact."""
    have = {it.kind for it in items}
    words = [(it.kind, set(_norm(it.text).split())) for it in items]
    retracted = {(it.kind, _norm(it.text)) for it in items if it.retract}
    out = []
    for it in extra:
        if it.kind in ("name", "summary") and it.kind in have:
            continue
        if it.retract and (it.kind, _norm(it.text)) in retracted:
            continue  # the same retraction twice would close one fact twice
        mine = set(_norm(it.text).split())
        if not (it.change or it.retract) and any(k == it.kind and mine <= w for k, w in words):
            continue
        out.append(it)
    return out


_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_DATE = re.compile(
    rf"\b(?:\d{{1,2}} (?:{_MONTHS})(?: \d{{4}})?|(?:{_MONTHS})(?: \d{{1,2}})?,? \d{{4}}|(?:in|of) \d{{4}}|"
    r"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday))\b"
)


def _said(words: str, user_text: str) -> bool:
    w = _norm(words)
    # "Mia's my sister", "I'm Tom's brother": a name said with its possessive is said.
    return bool(w) and re.search(rf"(?:^| ){re.escape(w)}(?:'s)?(?: |$)", user_text) is not None


def _unsupported(it: ExtractedItem, user_text: str) -> str:
    """Why an item says more than the user did ('' when it does not)."""
    if it.source_text.strip().endswith("?") or is_question(it.source_text):
        return "source is a question"
    if it.kind == "relation" and not _said(it.person, user_text):
        return f"names {it.person!r}, who was not mentioned"
    if it.kind == "relation" and not is_relation_word(it.relation):
        return f"{it.relation!r} is not a relation between people"  # "lives in" -> a person named Paris
    if it.kind == "name" and not _said(it.text, user_text):
        return f"name {it.text!r} was not said"
    if it.kind == "name" and any(w.lower() in COMMON for w in it.text.split()):
        return f"{it.text!r} is a common word, not a name"  # "it's me again" -> "You"
    # Proper nouns and numbers cannot be paraphrased: each must be in the user's words.
    # Dates are the exception: "yesterday" is rightly written as the absolute date.
    text = _DATE.sub(" ", it.text.strip())
    for word in re.findall(r"(?<!^)(?<![.!?] )\b[A-Z][\w'-]*|\d+", text):
        if word not in ("I", "I'm") and not _said(word.removesuffix("'s"), user_text):
            return f"{word!r} was not said"
    return ""
