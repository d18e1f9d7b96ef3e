"""The post-check between any extractor (a local model, an OpenAI-compatible one, the rules)
and the update agent: what reaches memory is about the person, as they said it.

- A fact, preference or summary whose subject is the assistant (memory/assistant_subject.py)
  is dropped. A summary that mixes the person and the assistant is rewritten by deleting the
  assistant's sentences and trailing clauses (only deleting: no word is made up, and the person's
  part of the episode keeps its summary); when nothing about the person is left, it is dropped.
- A liking ("likes tennis") or a habit ("plays tennis") whose only evidence in the user's words is a wish or plan ("I'd
  like to learn tennis") becomes the plan fact ("wants to learn tennis"), or is dropped when the
  wish is no plan ("I'd love to play tennis someday"); memory/wishes.py. A plan a model wrote
  as a preference ("wants to learn tennis") is stored as the fact it is, as the rules write it.
- An item quoted from a turn the user took back as a joke ("I'm actually a secret agent. Ha,
  no, just joking.") is dropped, as the rules never read such a turn (memory/statements.py).
- A fact or preference that states as holding what its source says has ended ("enjoys
  crossword puzzles" from "I no longer enjoy crossword puzzles") is dropped; an item that says
  a state ended ("no longer makes cakes") also retracts the state; a retraction of what its
  source says holds ("moved to Paris" from "we moved to Paris last month") is dropped
  (memory/polarity.py).

Every change is returned with its reason, for the episode's log and the timeline.
"""

from __future__ import annotations

from dataclasses import dataclass

from egomem.memory import statements
from egomem.memory.assistant_subject import about_assistant, without_assistant
from egomem.memory.items import ExtractedItem, SessionText
from egomem.memory.polarity import (
    asserts_what_ended,
    retraction_of,
    retracts_what_holds,
    retracts_what_the_session_holds,
)
from egomem.memory.wishes import is_plan_text, liking_from_wish

ABOUT_ASSISTANT = "about the assistant, not the person"
WISH_NOT_LIKING = "a wish or plan, not a liking"
ENDED_NOT_HELD = "its source says this has ended"
HELD_NOT_ENDED = "its source says this holds"
SESSION_HOLDS = "the session says this holds"
SAID_IN_JEST = "said in jest and taken back"


@dataclass(frozen=True)
class Checked:
    """An item the post-check changed: `replaced_by` None when it was dropped."""

    item: ExtractedItem
    replaced_by: ExtractedItem | None
    why: str


def check_items(items: list[ExtractedItem], session: SessionText) -> tuple[list[ExtractedItem], list[Checked]]:
    """The items to keep (in order, changed ones in place), and what was changed or dropped."""
    said = [t.text for t in session.user_turns()]
    sentences = [s for t in said for s in statements.sentences(t)]
    taken_back = statements.joke_turns(said)
    kept: list[ExtractedItem] = []
    changed: list[Checked] = []
    texts = {(it.kind, it.text.strip().lower()) for it in items}
    retracted = {(it.kind, it.text.strip().lower(), True) for it in items if it.retract}
    for it in items:
        new: ExtractedItem | None = it
        why = ""
        if it.kind in ("fact", "preference", "summary") and about_assistant(it.text):
            why = ABOUT_ASSISTANT
            rest = without_assistant(it.text) if it.kind == "summary" else ""
            new = it.model_copy(update={"text": rest}) if rest else None
        elif it.kind != "summary" and statements.in_jest(it.source_text, said):
            why = SAID_IN_JEST
            new = None
        elif asserts_what_ended(it):
            why = ENDED_NOT_HELD
            new = None
        elif retracts_what_holds(it):
            why = HELD_NOT_ENDED
            new = None
        elif retracts_what_the_session_holds(it, said, taken_back):
            why = SESSION_HOLDS
            new = None
        elif it.kind == "preference" and is_plan_text(it.text):
            why = WISH_NOT_LIKING
            new = it.model_copy(update={"kind": "fact"})
        elif it.kind in ("preference", "fact") and not it.retract:
            wish = liking_from_wish(it.text, sentences)
            if wish is not None:
                why = WISH_NOT_LIKING
                plan, source = wish
                new = None
                if plan and ("fact", plan.lower()) not in texts:
                    new = ExtractedItem(kind="fact", text=plan, source_text=source, importance=it.importance)
                    texts.add(("fact", plan.lower()))
        if why:
            changed.append(Checked(it, new, why))
        if new is not None:
            kept.append(new)
            ended = retraction_of(new)
            if ended is not None and (ended.kind, ended.text.lower(), True) not in retracted:
                kept.append(ended)
                retracted.add((ended.kind, ended.text.lower(), True))
    return kept, changed
