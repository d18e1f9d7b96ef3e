"""The offline, deterministic memory extractor (the `rules` backend of the `extract` task).

It reads the user's own utterances sentence by sentence, keeps only what is soundly the
user's own statement (memory/statements.py drops questions, jokes taken back, wishes,
reported speech, songs and recogniser hallucinations), and recognises first-person
statements, singular or plural: the user's name (memory/names.py judges every name, in
cased Whisper text and in lower-case ASR text), named relatives and friends
(rules_people.py), job, workplace, home, likes and strong dislikes, habits, pets, health,
dates, life events, and changes and retractions of any of them (rules_facts.py; the
changes of state "used to ..., now ...", "switched from X to Y", "lived in X until 2019"
in rules_changes.py: the old state is retracted, never written as current). Items
are written in the canonical third-person form memory/slots.py understands, with a short
dated summary. It never invents: every item quotes the utterance it came from. It misses
things rather than guessing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime

from egomem.memory import rules_changes as changes
from egomem.memory import rules_facts as facts
from egomem.memory import statements
from egomem.memory.items import ExtractedItem, Extraction, SessionText, clip
from egomem.memory.names import NameJudge, is_cased
from egomem.memory.rules_people import Introduction, introduction, relations, user_name
from egomem.memory.rules_text import Collector
from egomem.memory.social import same_name

# A long unpunctuated ASR turn holds several statements: read each clause on its own
# ("i love hiking and i hate jazz"). Never split "Tom and I are friends".
_CLAUSE = re.compile(
    r"\s*[,;]?\s+(?:and|but|so|because|also|then|plus|though|although)\s+(?=(?:i|we)\s+(?!are\b|were\b|both\b))", re.I
)


# The readers of a present-tense statement, also used to read the old state of "I used to ...".
_STATE_READERS = [facts.work, facts.home, facts.preferences, facts.habits, facts.body]


def _read_sentence(s: str, c: Collector, day: datetime) -> None:
    got_name = user_name(s, c)
    structured = relations(s, c)
    for clause in _CLAUSE.split(s):
        # "I used to X, now I Y": the old part is read as what ended, the new one as a change.
        for part, now in changes.split_change(clause):
            first = len(c.items)
            _read_clause(part, c, day, quiet=structured or got_name)
            if now:
                for it in c.items[first:]:
                    if it.kind in ("fact", "preference") and not it.retract:
                        it.change = True


def _read_clause(clause: str, c: Collector, day: datetime, *, quiet: bool) -> None:
    if (
        changes.past_state(clause, c, _STATE_READERS)
        or changes.switched(clause, c)
        or changes.left_and_moved(clause, c)
    ):
        return  # the old state is retracted; nothing in its words holds now
    changed = facts.retractions(clause, c)
    if not changed:
        changed = facts.work(clause, c)
        changed = facts.home(clause, c) or changed
        changed = facts.goals(clause, c, day) or facts.preferences(clause, c) or changed
    changed = facts.body(clause, c) or changed
    changed = facts.habits(clause, c) or changed
    if not changed and not quiet:
        facts.event(clause, c, day)


def extract_rules(session: SessionText) -> Extraction:
    """Items from the user's own turns; the assistant's turns are context, never a source."""
    day = datetime.fromtimestamp(session.start, UTC)
    judge = NameJudge.of_session(session)
    turns = session.user_turns()
    texts = [statements.clean(t.text) for t in turns]
    jokes = statements.joke_turns(texts)
    loops = statements.repeated(texts)
    items: list[ExtractedItem] = []
    name: str | None = session.user_name
    for i, (turn, text) in enumerate(zip(turns, texts, strict=True)):
        if i in jokes:
            continue
        c = Collector(turn.text.strip(), judge, is_cased(turn.text))
        for s in statements.sentences(text):
            if statements.is_repeated(s, loops) or statements.is_unreliable(s):
                continue
            own = statements.own_words(s)
            if own:
                _read_sentence(own, c, day)
        for it in c.items:
            if it.kind == "name" and name is None:
                name = it.text
        items.extend(c.items)
    items = _dedupe(items)
    if turns:
        items.append(_summary(session, items, name))
    return Extraction(items=items)


def _introductions(text: str, known: list[str] | None) -> Iterator[Introduction]:
    """The introduction each reliable sentence of one utterance gives, judged with one judge."""
    judge, cased = NameJudge(known or []), is_cased(text)
    for s in statements.sentences(statements.clean(text)):
        if not statements.is_unreliable(s):
            intro = introduction(statements.own_words(s), Collector(text, judge, cased))
            if intro is not None:
                yield intro


def name_in(text: str, known: list[str] | None = None) -> str | None:
    """The name the user gives in one utterance, judged as the extractor would (None if none):
    what the runtime uses to learn a name during the session."""
    return next((i.name for i in _introductions(text, known)), None)


def several_people_named(text: str, known: list[str] | None = None) -> list[str]:
    """Different names that sentences of one utterance each give as the speaker's own ("This is Diane
    ... And I'm Sheila ..."): one voice does not have two names, so the utterance holds several people
    that the turn detector and splitter did not tell apart. At least one of them must be said in the
    first person ("I'm X", "my name is X"): "This is Anna. This is Ben." may be one speaker
    introducing two others; a nickname ("call me Bob") is no second person, nor one name in two forms
    (Sam / Samantha). Empty when the utterance holds at most one speaker's name."""
    intros: list[Introduction] = []
    for intro in _introductions(text, known):
        if intro.kind != "nickname" and not any(same_name(i.name, intro.name) for i in intros):
            intros.append(intro)
    if len(intros) < 2 or all(i.kind == "this is" for i in intros):
        return []
    return [i.name for i in intros]


def _dedupe(items: list[ExtractedItem]) -> list[ExtractedItem]:
    seen: set[tuple[str, str, bool]] = set()
    out = []
    for it in items:
        key = (it.kind, it.text.lower(), it.retract)
        if key not in seen:
            seen.add(key)
            out.append(it)
    return out


QUOTE_CHARS = 300  # one sentence quoted in a summary: an ASR loop is one "sentence" of thousands


def _summary(session: SessionText, items: list[ExtractedItem], name: str | None) -> ExtractedItem:
    who = name or "the user"
    points = [it.text for it in items if it.kind in ("fact", "preference", "relation") and not it.retract][:6]
    if points:
        body = f"{who[:1].upper() + who[1:]}: " + "; ".join(points) + "."
    else:
        # Only statements: a question or a song line quoted in a summary is a false memory too.
        said = [
            s
            for t in session.user_turns()
            for s in statements.sentences(statements.clean(t.text))
            if not statements.is_unreliable(s)
        ]
        longest = [clip(s, QUOTE_CHARS) for s in sorted(said, key=len, reverse=True)[:2]]
        body = f"{who[:1].upper() + who[1:]} said: " + " ".join(f'"{s}"' for s in longest) if longest else ""
    user_text = " ".join(t.text.strip() for t in session.user_turns())
    return ExtractedItem(
        kind="summary",
        text=clip(f"On {session.date}, {who} talked with the assistant. {body}".strip()),
        source_text=user_text[:2000],
        importance=0.3,
    )
