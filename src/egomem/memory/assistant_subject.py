"""Memory is about the person, never about the assistant (the robot) that talked with them.

A model reading a session may summarise the robot's own lines as if they were the person's
("Assistant talked about their job and their name.", "the assistant asked the user for their
name, but the user did not respond."). `about_assistant` finds a clause whose subject is the
assistant; "the user asked the assistant about X" (the person as the subject) is not one.
`without_assistant` rewrites a summary by deleting such sentences and clauses (it only
deletes, never writes new words), or gives '' when nothing about the person is left.
`bench real` counts memories about the assistant with this same detector.
"""

from __future__ import annotations

import re

# The assistant as the subject: "Assistant ...", "the assistant ...", "the AI (assistant) ...",
# "the robot ...", "Robot: ...", the product's own name.
# A job title is not the robot: "assistant manager at Tesco", "an assistant to the mayor".
_ASSISTANT = re.compile(
    r"^(?:(?:the|an|our|your|this|a) )?(?:assistant(?! (?:manager|professor|director|editor|coach|teacher|principal|"
    r"producer|to)\b)|egomem)\b|^the (?:ai|agent|robot|bot|system)\b|^robot\b"
)
# A subjectless fact ("asked the user for their name") whose object is the user: the actor was
# someone else, in a session of the user and the robot, the robot.
_ACTS_ON_USER = re.compile(
    r"^(?:asked|told|greeted|thanked|welcomed|reminded|helped|answered|offered|suggested|explained|"
    r"introduced itself)(?: to)? the user\b"
)
# Clauses: sentence ends, semicolons, colons, ", and/but/while/so/then/whereas", and a bare
# "and/but/while/then" before "the"/"a" ("Emily talked about tennis and the assistant listened").
_CLAUSE = re.compile(r"[.!?;:\n]+|,\s*(?:and|but|while|so|then|whereas)\s+|\s+(?:and|but|while|then)\s+(?=the\s|an?\s)")
# A time or place said before the subject: "On 3 May 2024, the assistant asked ...".
_LEAD = re.compile(
    r"^(?:(?:on|in|during|at|after|before|today|yesterday|later|then|first|finally|afterwards)\b[^,]{0,40},\s*)+"
)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+")
# Separators after which the rest of a sentence is a clause of its own, so cutting there leaves
# a whole clause ("Lena talked about her job, and the assistant asked her name").
_CUTTABLE = re.compile(r"^(?:;|:|,\s*(?:and|but|while|so|then|whereas)\s+)$")


def _is_assistant_clause(clause: str) -> bool:
    c = _LEAD.sub("", clause.strip().lower())
    return bool(_ASSISTANT.match(c) or _ACTS_ON_USER.match(c))


def about_assistant(text: str) -> bool:
    """Whether a clause of `text` has the assistant as its subject."""
    return any(_is_assistant_clause(c) for c in _CLAUSE.split(text) if c.strip())


def without_assistant(summary: str, min_words: int = 3) -> str:
    """`summary` without the sentences whose subject is the assistant, and without a trailing
    clause about the assistant where it is cut off by a conjunction after a comma (a whole clause
    stays). A sentence that opens with the assistant, or joins it to the person with a bare "and"
    ("Emily and the assistant talked"), goes whole: cutting it would leave a fragment. '' when
    what is left says nothing (fewer than `min_words` words once a date lead is removed)."""
    kept: list[str] = []
    for sentence in _SENTENCE.split(summary.strip()):
        seps = list(_CLAUSE.finditer(sentence))
        starts = [0, *(m.end() for m in seps)]
        ends = [*(m.start() for m in seps), len(sentence)]
        first = next(
            (i for i, (a, b) in enumerate(zip(starts, ends, strict=True)) if _is_assistant_clause(sentence[a:b])), None
        )
        if first is None:
            kept.append(sentence)
        elif first > 0 and _CUTTABLE.match(seps[first - 1].group(0)):
            kept.append(sentence[: seps[first - 1].start()].rstrip(" ,;:") + ".")
    text = " ".join(kept).strip()
    return text if len(_LEAD.sub("", text.lower()).split()) >= min_words else ""
