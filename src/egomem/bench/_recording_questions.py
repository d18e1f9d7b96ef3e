"""Questions about a memorised synthetic recording whose answers its script knows, and
their scores.

The script (bench/realtime.py `build_script`) says who spoke when and LibriSpeech's
reference words of each utterance. The questions are asked as a user would, about a
content word of one utterance, taken from the reference words (never from the ASR output)
and said in no other utterance of the recording:

- `said`: "What was said about <word>?"  right: an episode overlapping the utterance;
- `who`:  "Who talked about <word>?"     right: the person who said it;
- `when`: "When did we talk about <word>?" right: an episode overlapping the utterance;
- `at_time`: "Who did I talk to at HH:MM on D Month YYYY?" (one per visit, at its middle)
  right: an item whose person is one of the speakers the script has visiting in that
  minute (an episode at that time that belongs to somebody else is wrong).

Nobody in the recording says their name, so a person is a user of the store: the user
whose episodes hold most of that speaker's utterances, one to one: a user that holds the
most utterances of several speakers (a merge) stands for the one it holds most of, and the
others have no user, so an answer naming the merged user is wrong for them. Scores per
type: `hit_at_k`, some returned evidence item (a turn, summary or fact of an episode)
overlaps an utterance the question is about, or is the right person's; `top1`, the best
item does (without an LLM the answer *is* the best item, so top1 is whether the answer
names the right thing).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from egomem.bench.realtime import Line
from egomem.retrieval.ask_types import AskResult, EvidenceItem
from egomem.retrieval.lexical import analyze
from egomem.schemas import Episode, day_text

KINDS = ("said", "who", "when", "at_time")
_TEMPLATES = {
    "said": "What was said about {word}?",
    "who": "Who talked about {word}?",
    "when": "When did we talk about {word}?",
}
MIN_WORD = 5  # letters: shorter words are too often a different word to the recogniser
# Words of five letters or more that say nothing a user would ask about (pronouns,
# determiners, auxiliaries, conjunctions, adverbs of degree and time).
FUNCTION_WORDS = frozenset(
    "about above after again against along already although always among another anything around because "
    "before behind being below beneath beside besides between beyond cannot could didn doesn during either "
    "enough every everything herself himself however itself might myself neither never nothing other others "
    "ought perhaps quite rather really shall should since something still their theirs themselves there "
    "therefore these thing things those though through thus together toward towards under unless until "
    "upon whatever where whether which while whole whose within without would yourself yourselves".split()
)


@dataclass(frozen=True)
class Question:
    kind: str
    text: str
    spans: tuple[tuple[float, float], ...]  # stream seconds the answer lies in (every time it was said)
    speaker: str  # who said it / who visited
    present: tuple[str, ...] = ()  # at_time: every speaker visiting in the minute asked about


def _words(line: Line) -> list[str]:
    return re.findall(r"[a-z]+", line.transcript.lower())


def _keywords(lines: Sequence[Line]) -> dict[str, list[str]]:
    """utt_id -> its content words (one stemmed term each) said in no other utterance, in order."""
    terms = {ln.utt_id: set(analyze(ln.transcript)) for ln in lines}
    out: dict[str, list[str]] = {}
    for ln in lines:
        if not ln.whole or ln.utt_id in out:
            continue  # a cut utterance's words may not be in its audio
        others = set().union(*(t for u, t in terms.items() if u != ln.utt_id))
        picked = []
        for w in dict.fromkeys(_words(ln)):
            term = analyze(w)
            if len(w) >= MIN_WORD and w not in FUNCTION_WORDS and len(term) == 1 and term[0] not in others:
                picked.append(w)
        out[ln.utt_id] = picked
    return out


def questions(lines: Sequence[Line], origin: float, seed: int = 0) -> list[Question]:
    """The questions about a recording that began at `origin` (epoch s), in a fixed order."""
    rng = np.random.default_rng(seed)
    out: list[Question] = []
    for utt_id, words in _keywords(lines).items():
        said = [ln for ln in lines if ln.utt_id == utt_id]
        spans = tuple((ln.start, ln.end) for ln in said)
        chosen = [words[i] for i in rng.permutation(len(words))] if words else []
        for kind, word in zip(_TEMPLATES, chosen * 3, strict=False):  # different words where there are enough
            out.append(Question(kind, _TEMPLATES[kind].format(word=word), spans, said[0].speaker))
    visits = {v: [ln for ln in lines if ln.visit == v] for v in sorted({ln.visit for ln in lines})}
    visit_spans = {v: (at[0].start, at[-1].end) for v, at in visits.items()}
    asked: set[str] = set()
    for v, (start, end) in visit_spans.items():
        mid = datetime.fromtimestamp(origin + (start + end) / 2, UTC)
        text = f"Who did I talk to at {mid:%H:%M} on {day_text(mid)}?"
        if text in asked:
            continue  # two visits in one minute: one question, either visit is right
        asked.add(text)
        minute = mid.replace(second=0).timestamp() - origin
        right = {w: s for w, s in visit_spans.items() if s[0] < minute + 60 and s[1] >= minute}
        present = tuple(dict.fromkeys(visits[w][0].speaker for w in right))
        out.append(Question("at_time", text, tuple(right.values()), visits[v][0].speaker, present))
    return out


def _votes(lines: Sequence[Line], episodes: Sequence[Episode], origin: float) -> dict[str, Counter[str]]:
    """Speaker -> how many of their utterances each user's episodes overlap."""
    votes: dict[str, Counter[str]] = {}
    for ln in lines:
        for ep in episodes:
            if ep.participants and _overlaps(ep, origin, (ln.start, ln.end)):
                votes.setdefault(ln.speaker, Counter())[ep.participants[0]] += 1
    return votes


def merges(lines: Sequence[Line], episodes: Sequence[Episode], origin: float) -> list[list[str]]:
    """Groups of two or more speakers whose utterances lie mostly in one user's episodes: the
    people memory has merged (each group sorted; groups in order of their first speaker)."""
    by_user: dict[str, list[str]] = {}
    for spk, c in _votes(lines, episodes, origin).items():
        by_user.setdefault(_top(c), []).append(spk)
    return sorted(sorted(g) for g in by_user.values() if len(g) > 1)


def people_of(lines: Sequence[Line], episodes: Sequence[Episode], origin: float) -> dict[str, str]:
    """Speaker -> the user whose episodes overlap most of the speaker's utterances."""
    votes = _votes(lines, episodes, origin)
    top = {spk: _top(c) for spk, c in votes.items()}
    out: dict[str, str] = {}
    for spk, user in top.items():
        # One to one: a user that is the top of several speakers (a merge) stands for the one it
        # holds most utterances of (ties: the smaller speaker id); the others have no user.
        rivals = sorted((-votes[o][user], o) for o, u in top.items() if u == user)
        if rivals[0][1] == spk:
            out[spk] = user
    return out


def _top(votes: Counter[str]) -> str:
    """The user holding most of a speaker's utterances (ties: the smaller id, for repeatability)."""
    best = max(votes.values())
    return min(u for u, n in votes.items() if n == best)


def _overlaps(ep: Episode, origin: float, span: tuple[float, float]) -> bool:
    return ep.start <= origin + span[1] and ep.end >= origin + span[0]


def _right(
    q: Question, item: EvidenceItem, episodes: dict[str, Episode], people: dict[str, str], origin: float
) -> bool:
    ep = episodes.get(item.episode_id or "")
    who = item.person_id or (ep.participants[0] if ep is not None and ep.participants else None)
    if q.kind == "who":
        return who is not None and who == people.get(q.speaker)
    if q.kind == "at_time":  # the right person, at that time
        at_time = ep is None or any(_overlaps(ep, origin, s) for s in q.spans)
        return at_time and who is not None and who in {people.get(s) for s in q.present}
    return ep is not None and any(_overlaps(ep, origin, s) for s in q.spans)


def score(
    qs: Sequence[Question],
    results: Sequence[AskResult],
    episodes: Sequence[Episode],
    people: dict[str, str],
    origin: float,
) -> dict[str, dict[str, float | int]]:
    """Per question kind: n, hit_at_k, top1 (shares), empty (answers with no evidence), k."""
    by_id = {ep.id: ep for ep in episodes}
    out: dict[str, dict[str, float | int]] = {}
    for kind in KINDS:
        pairs = [(q, r) for q, r in zip(qs, results, strict=True) if q.kind == kind]
        if not pairs:
            continue
        hits = [[_right(q, it, by_id, people, origin) for it in r.evidence] for q, r in pairs]
        out[kind] = {
            "n": len(pairs),
            "hit_at_k": round(sum(any(h) for h in hits) / len(pairs), 3),
            "top1": round(sum(bool(h) and h[0] for h in hits) / len(pairs), 3),
            "empty": sum(r.empty for _, r in pairs),
            "k": max((len(r.evidence) for _, r in pairs), default=0),
            # Questions about a speaker memory holds under no user of their own (merged into another's,
            # or whose sessions were held and dropped): a "who" question about them cannot be right.
            "speaker_without_user": sum(people.get(q.speaker) is None for q, _ in pairs),
        }
    return out
