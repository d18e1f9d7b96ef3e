"""Whether a language model's answer rests on the evidence it was given.

A small local model sometimes answers from its prompt instead of the evidence: asked who did
something, it answered "Assistant" while evidence #1 said who. `ask` then answers with its best
evidence itself and says so (retrieval/ask.py). An answer is grounded when one of its content words
(stemmed, stop words left out) is in the evidence: the items' words, who said them or whom they
are about, and the dates they carry (year, month, day, weekday, since the model is told to work
dates out). Role words ("assistant", "user") name nobody, so they ground nothing, and an answer
that puts the assistant forward as the person ("Assistant", "The assistant talked about ...") is
never grounded. "I don't know from memory" (what the prompt asks for when the evidence does not
answer) is the model's honest answer and stands; a bare "Yes."/"No." stands for a yes/no question.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime

from egomem.retrieval.ask_types import EvidenceItem
from egomem.retrieval.lexical import analyze
from egomem.retrieval.search import ASSISTANT

# Words for the parties of a conversation, not for anyone in it.
_ROLE_WORDS = frozenset(analyze("assistant assistants user users ai chatbot bot"))
_ASSISTANT_AS_PERSON = re.compile(
    r"^\W*(?:it\s+(?:was|is)\s+|that\s+(?:was|is)\s+)?(?:the\s+|an?\s+|your\s+|my\s+)?(?:ai\s+)?assistant\b",
    re.IGNORECASE,
)
_DECLINED = re.compile(r"^\W*i\s+(?:do\s*n[o']?t|cannot|can'?t)\s+(?:know|tell|say)\b", re.IGNORECASE)
_YES_NO = frozenset({"yes", "no"})
_YES_NO_QUESTION = re.compile(
    r"^\W*(?:do|does|did|is|are|was|were|has|have|had|can|could|will|would|should)\b", re.IGNORECASE
)


def declined(answer: str) -> bool:
    """The model said the evidence does not answer ("I don't know from memory")."""
    return bool(_DECLINED.match(answer))


def names_assistant(answer: str) -> bool:
    """The answer puts the assistant forward as the person ("Assistant.", "The assistant said ...")."""
    return bool(_ASSISTANT_AS_PERSON.match(answer))


def grounded(answer: str, question: str, evidence: Sequence[EvidenceItem]) -> bool:
    """Whether `answer` names someone or something the evidence holds (see the module doc)."""
    if declined(answer):
        return True
    if names_assistant(answer):
        return False
    words = re.findall(r"\w+", answer.lower())
    terms = {_number(t) for t in analyze(answer)} - _ROLE_WORDS - _YES_NO
    if not terms:
        return bool(words) and words[0] in _YES_NO and bool(_YES_NO_QUESTION.match(question))
    return bool(terms & _vocabulary(evidence))


def best_evidence(evidence: Sequence[EvidenceItem]) -> EvidenceItem:
    """The best item that is not the assistant's own line (the assistant's words are not memory
    about anyone); the best item when all are. `evidence` is ranked and not empty."""
    return next((it for it in evidence if (it.speaker or "").lower() != ASSISTANT), evidence[0])


def _vocabulary(evidence: Sequence[EvidenceItem]) -> set[str]:
    text: list[str] = []
    for it in evidence:
        who = it.person or ("" if (it.speaker or "").lower() == ASSISTANT else it.speaker or "")
        text += [it.quote, who]
        if it.time is not None:
            day = datetime.fromtimestamp(it.time, UTC)
            text.append(day.strftime("%Y %B %b %d %A"))
    return {_number(t) for t in analyze(" ".join(text))} - _ROLE_WORDS


def _number(term: str) -> str:
    """'03' and '3' are one day."""
    return (term.lstrip("0") or "0") if term.isdigit() else term
