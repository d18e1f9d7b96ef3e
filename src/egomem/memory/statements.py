"""Which of the user's words are statements about themselves, before any rule reads them.

The rule extractor must never turn a question, a joke, a wish, someone else's words, a
song or a recogniser's hallucination into a memory. This module keeps only what can
soundly be read as the user's own statement; it errs on the side of dropping.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

from egomem.memory.wishes import GOAL_VERBS

# Whisper writes sounds and music as annotations; lyrics come between notes.
_ANNOTATION = re.compile(r"\[[^\]]*\]|\((?:[^)]*\b(?:music|laugh\w*|applause|noise|inaudible|sigh\w*|cough\w*))[^)]*\)")
_SONG = re.compile(r"[♪♫🎵🎶]")
# Lines Whisper is known to produce on silence or from a video in the background.
_HALLUCINATION = re.compile(
    r"\b(?:thanks? (?:you )?for watching|please subscribe|like and subscribe|subtitles by|captions? by|"
    r"transcribed by|amara\.org|see you (?:in the )?next (?:video|time)|don't forget to subscribe)\b",
    re.IGNORECASE,
)
# The user takes back what they just said.
_JOKE = re.compile(
    r"\b(?:(?:just|only) (?:kidding|joking)|i'?m (?:just )?(?:kidding|joking)|i am (?:just )?(?:kidding|joking)|"
    r"kidding|jk|that was a joke|not really|not seriously)\b",
    re.IGNORECASE,
)
# Wishes, suppositions, pretend play: not facts about the user.
_HYPOTHETICAL = re.compile(
    r"\b(?:if|imagine|pretend\w*|wish\w*|would|could|might|suppose|supposing|dream\w*|someday|maybe|perhaps|"
    r"i'd|we'd|role ?play\w*|let's say)\b",
    re.IGNORECASE,
)
# A plan to learn, try or take something up is said with "I'd like to", yet it is no wish
# about an imagined world: "I'd love to learn the piano" is a goal worth remembering.
# Only the goal clause itself, with nothing hypothetical left in it, is kept.
GOAL = re.compile(
    r"^(?:(?:oh|so|and|well|also),?\s+)?(?:i'd|i would|we'd|we would) (?:really )?(?:like|love) to "
    rf"{GOAL_VERBS}(?![^.!?]*\b(?:if|someday|maybe|perhaps|one day)\b)",
    re.I,
)
# Someone else's words: "my boss said I'm lazy" says nothing sure about the user.
_REPORTED = re.compile(
    r"\b(?:said|says|say|told me|tells me|thinks|thought|claims?|claimed|believes?|asked|asks)\b.*$", re.I
)
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”")
_LEAD = re.compile(
    r"^(?:(?:so|and|but|well|hey|hi|hello|oh|okay|ok|um|uh|er|like|also|then|anyway|now|yeah|yes|no|right|"
    r"quick question|by the way|btw|listen|tell me something)[,!]?\s+)+",
    re.IGNORECASE,
)
_AUX = r"(?:do|does|did|is|are|was|were|am|can|could|will|would|should|shall|have|has|had|may|might|must|isn't|aren't|don't|doesn't|didn't|won't|can't|haven't|hasn't)"  # noqa: E501
_SUBJ = r"(?:you|i|we|they|he|she|it|my|your|our|his|her|their|the|a|an|any|anyone|anybody|someone|somebody|there|that|this|these|those)"  # noqa: E501
_WH_VERB = (
    r"(?:'s|\s+(?:is|are|was|were|do|does|did|can|could|will|would|should|has|have|about|kind|sort|many|much|"
    r"long|old|often|else|time|come)\b)"
)
_ASKING = (
    r"(?:tell me|remind me|guess who|any idea|i wonder|i was wondering|i'm wondering|do you (?:know|remember|think))"
)
_QUESTION_START = re.compile(
    rf"^(?:{_AUX}\s+{_SUBJ}\b|(?:who|whom|whose|which)\b|(?:what|where|when|why|how){_WH_VERB}|{_ASKING}\b)",
    re.IGNORECASE,
)


def sentences(text: str) -> Iterator[str]:
    text = text.replace("’", "'").replace("‘", "'")
    for s in re.split(r"(?<=[.!?;])\s+|\n+", text):
        s = s.strip()
        if s:
            yield s


_MUSIC = re.compile(r"[\[(][^\])]*\b(?:music|singing|song|lyrics)\b", re.IGNORECASE)


def clean(text: str) -> str:
    """A turn without sound annotations. A turn the recogniser marked as music is dropped
    whole: what it heard over the music may be lyrics."""
    if _MUSIC.search(text):
        return ""
    text = _ANNOTATION.sub(" ", text)
    return " ".join(text.split())


def is_question(sentence: str) -> bool:
    """A question, cased ("...?") or lower-case ASR ("do you know my friend anna")."""
    s = sentence.strip()
    if s.endswith("?"):
        return True
    return _QUESTION_START.match(_LEAD.sub("", s.lower().replace("’", "'"))) is not None


def is_unreliable(sentence: str) -> str:
    """Why `sentence` may not be read as the user's own statement ('' when it may)."""
    if _SONG.search(sentence):
        return "song"
    if _HALLUCINATION.search(sentence):
        return "recogniser hallucination"
    if is_question(sentence):
        return "question"
    if _HYPOTHETICAL.search(sentence) and not GOAL.search(sentence):
        return "hypothetical"
    return ""


def own_words(sentence: str) -> str:
    """The sentence without quotations and reported speech (may be empty)."""
    return _REPORTED.sub("", _QUOTED.sub(" ", sentence)).strip(" ,;:-")


def joke_turns(texts: list[str]) -> set[int]:
    """Turns the user took back: a turn that says it was a joke, and the turn before it
    when the joke marker opens the next one ("My wife is a robot." "Just kidding.")."""
    out: set[int] = set()
    for i, t in enumerate(texts):
        m = _JOKE.search(t)
        if m is None:
            continue
        out.add(i)
        if i > 0 and not t[: m.start()].strip(" ,.!-").strip():
            out.add(i - 1)
    return out


def in_jest(source: str, texts: list[str]) -> bool:
    """Whether an item's quoted source was said only in turns the user took back (joke_turns):
    a model reads "I'm actually a secret agent. Ha, no, just joking." as a job."""
    said = _key(source)
    if not said:
        return False
    jokes = joke_turns(texts)
    where = [i for i, t in enumerate(texts) if said in _key(t)]
    return bool(where) and all(i in jokes for i in where)


def repeated(texts: list[str], times: int = 3) -> set[str]:
    """Sentences said `times` or more in one session: a recogniser looping, or a jingle."""
    counts = Counter(_key(s) for t in texts for s in sentences(t))
    return {k for k, n in counts.items() if n >= times and k}


def _key(sentence: str) -> str:
    return " ".join(re.findall(r"[a-z']+", sentence.lower()))


def is_repeated(sentence: str, keys: set[str]) -> bool:
    return _key(sentence) in keys
