"""Scripts from LoCoMo (CC BY-NC 4.0, non-commercial use only): long two-person conversations.

LoCoMo (Maharana et al., ACL 2024) holds ten long conversations between two people over
months (written by LLM agents, edited by people), with LLM-written per-session observations
(facts tied to the turn they came from), session summaries and question/answer items with
evidence turns. The conversation
is loaded by the benchmark's own loader (`egomem_eval.locomo.load_locomo`), and each
speaker in turn plays the user:

- **dialog sessions**: every LoCoMo session becomes a script session of that user; each
  of the user's lines (consecutive ones joined) is a turn, the other speaker's reply the
  assistant's line (level 0: chat, no memory asked for); the session is dated (`start`) and
  names the other speaker (`other_speaker`: the lines were theirs, not a robot's);
- **profile**: the user's own observations (the facts that level-1 questions rest on
  first), the last session summary, and the other speaker as a
  friend in the social graph, with that speaker's observations as what the user knows;
- **recall sessions**: LoCoMo's questions (categories 1-4) become the user's questions.
  Evidence spoken only by the other speaker -> a level-2 turn about the friend: `<retr>`
  is `friend` and the question's content words, the supporting facts the observations
  tied to the evidence turns (else the turns themselves), dated. Evidence spoken only by
  the user -> a level-1 turn, the question rewritten in the first person (skipped when a
  pronoun would be left pointing at the wrong person), its facts put in the profile
  (skipped when they would not fit in `max_facts`). The
  assistant's line is LoCoMo's gold answer, or (`--llm-answers`) a spoken sentence the
  local LLM writes from it, labelled by the turn's `generated_by`.

Conversations 1-5 are the dev split, 6-10 the test split (as in `bench locomo`): keep the
test conversations out of training data.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from egomem.dialog.cascaded import Completer
from egomem.llm.base import LLMError
from egomem.llm.prompts import render_prompt
from egomem_eval.locomo import Conversation, session_time
from egomem_eval.locomo import Turn as LocomoTurn
from egomem_training.data.script import Profile, Relation, Retr, Script, Session, Turn, User

DEV = range(0, 5)
TEST = range(5, 10)
FRIEND = "friend"  # LoCoMo's speakers are friends or acquaintances; the data names no closer tie
LICENCE = "LoCoMo, CC BY-NC 4.0"
_STOP = set(
    "a an the my your his her their our do does did you remember what which where who whom whose is are was were "
    "s it's what's there any again me i to of in on at for and or with how about know tell when why has have had "
    "be been would could should will can might may likely".split()
)
_THIRD = re.compile(r"\b(he|she|his|her|him|hers|himself|herself|they|them|their)\b", re.IGNORECASE)
_AUX_TO_I = {"does": "do", "is": "am", "has": "have", "was": "was"}

# (question, gold answer, supporting facts) -> the assistant's line; an LLMError keeps the gold line.
AnswerWriter = Callable[[str, str, list[str]], str]


@dataclass(frozen=True)
class LocomoOptions:
    roles: str = "both"  # "a", "b" or "both": which speaker plays the user
    max_facts: int = 12  # observations per profile / per friend (the Level-1 chunk is 512 tokens)
    questions_per_session: int = 6
    max_questions: int | None = None  # per user; None: every usable question


def split_range(split: str) -> range:
    return {"dev": DEV, "test": TEST, "all": range(0, 10)}[split]


def first_person(question: str, name: str) -> str | None:
    """'What did Melanie paint?' asked by Melanie -> 'What did I paint?'; None when a third-person
    pronoun would remain (it may mean the asker or someone else)."""
    if _THIRD.search(question):
        return None
    q = re.sub(rf"\b{re.escape(name)}['’`]s\b", "my", question)

    def aux(m: re.Match[str]) -> str:
        verb = _AUX_TO_I.get(m.group(1).lower(), m.group(1).lower())
        return (verb.capitalize() if m.group(1)[0].isupper() else verb) + " I"

    verbs = "does|is|has|was|did|will|would|can|could|should|might"
    q = re.sub(rf"\b({verbs}) {re.escape(name)}\b", aux, q, flags=re.IGNORECASE)
    q = re.sub(rf"\b{re.escape(name)}(?=\s*[?.!,]|$)", "me", q)  # an object at the end: "... give Melanie?"
    # Any other place ("foods that Audrey likes") would need the verb changed too: leave the question out.
    return None if q == question or re.search(rf"\b{re.escape(name)}\b", q) else q


def content_words(text: str, drop: set[str]) -> list[str]:
    words = re.findall(r"[a-z][a-z'-]*", text.lower())
    return [w for w in dict.fromkeys(words) if w not in _STOP and w not in drop and len(w) > 1]


def _day(date: str) -> str:
    """'1:56 pm on 8 May, 2023' -> '8 May 2023'."""
    return date.split(" on ", 1)[-1].replace(",", "").strip()


def _sentence(answer: str) -> str:
    a = answer.strip()
    return (a[0].upper() + a[1:] + ("" if a.endswith((".", "!", "?")) else ".")) if a else a


class _Conv:
    """One loaded conversation, indexed for conversion."""

    def __init__(self, conv: Conversation) -> None:
        self.conv = conv
        self.turn = {t.dia_id: t for t in conv.turns}
        self.obs: dict[str, list[tuple[str, str]]] = {}  # dia_id -> (speaker, fact)
        for speaker, fact, dia in conv.observations:
            self.obs.setdefault(dia, []).append((speaker, fact))

    def facts_for(self, evidence: list[str]) -> list[str]:
        """The observations tied to the evidence turns (else the turns), with the day they were said."""
        out: list[str] = []
        for e in evidence:
            t = self.turn[e]
            said = [f for s, f in self.obs.get(e, []) if s == t.speaker] or [f"{t.speaker} said: {t.text}"]
            out += [f"{f} ({_day(t.date)})" for f in said]
        return list(dict.fromkeys(out))

    def own_facts(self, speaker: str) -> list[str]:
        return [
            f"{f} ({_day(self.turn[d].date)})" for s, f, d in self.conv.observations if s == speaker and d in self.turn
        ]


def _dialog_turns(turns: Sequence[LocomoTurn], user: str) -> list[Turn]:
    """The user's lines (consecutive ones joined) with the other speaker's reply after them."""
    out: list[Turn] = []
    said: list[str] = []
    reply: list[str] = []
    for t in [*turns, None]:
        if t is None or (t.speaker == user and reply):
            if said and reply:
                out.append(Turn(user=" ".join(said), assistant=" ".join(reply)))
            said, reply = [], []
        if t is None:
            break
        if not t.text.strip():
            continue
        if t.speaker == user:
            said.append(t.text.strip())
        elif said:  # the other speaker's lines before the user's first one are left out
            reply.append(t.text.strip())
    return out


def _recall_turns(c: _Conv, user: str, friend: str, opts: LocomoOptions) -> tuple[list[Turn], list[str]]:
    """Level-1 and level-2 question turns, and the facts level-1 turns need in the profile."""
    turns: list[Turn] = []
    profile_facts: list[str] = []
    drop = {friend.lower(), user.lower(), f"{friend.lower()}'s"}
    for (question, _cat, evidence), answer in zip(c.conv.questions, c.conv.answers, strict=True):
        speakers = {c.turn[e].speaker for e in evidence}
        facts = c.facts_for(evidence)
        if not answer.strip():
            continue
        if speakers == {friend}:
            retr = Retr(relations=[FRIEND], keywords=content_words(question, drop))
            turns.append(Turn(user=question, assistant=_sentence(answer), level=2, retr=retr, facts=facts))
        elif speakers == {user} and (asked := first_person(question, user)) is not None:
            needed = list(dict.fromkeys([*profile_facts, *facts]))
            if len(needed) > opts.max_facts:
                continue  # its facts would not fit the profile: the question could not be answered
            turns.append(Turn(user=asked, assistant=_sentence(answer), level=1))
            profile_facts = needed
        if opts.max_questions is not None and len(turns) >= opts.max_questions:
            break
    return turns, profile_facts


def _write_answers(turns: list[Turn], writer: AnswerWriter, model: str) -> list[Turn]:
    out = []
    for t in turns:
        try:
            line = " ".join(writer(t.user, t.assistant, t.facts).split())
        except LLMError:  # the model failed: LoCoMo's own gold line stays
            line = ""
        out.append(t.model_copy(update={"assistant": line, "generated_by": model}) if line else t)
    return out


def _user_of(c: _Conv, user: str, friend: str, opts: LocomoOptions, level1_facts: list[str]) -> User:
    sid = c.conv.sample_id
    own = list(dict.fromkeys([*level1_facts, *c.own_facts(user)]))[: opts.max_facts]
    summaries = [c.conv.summaries[n] for n in sorted(c.conv.summaries, reverse=True)[:1]]
    social = [Relation(name=friend, relation=FRIEND, facts=c.own_facts(friend)[: opts.max_facts])]
    return User(
        id=f"locomo-{sid}-{user.lower()}",
        name=user,
        profile=Profile(facts=own, summaries=summaries),
        social=social,
    )


def script_from_locomo(
    convs: list[Conversation],
    opts: LocomoOptions | None = None,
    *,
    writer: AnswerWriter | None = None,
    writer_name: str = "",
) -> Script:
    """A script from loaded LoCoMo conversations (see the module docstring)."""
    opts = opts or LocomoOptions()
    users: list[User] = []
    sessions: list[Session] = []
    for conv in convs:
        c = _Conv(conv)
        a, b = conv.speakers
        pairs = {"a": [(a, b)], "b": [(b, a)], "both": [(a, b), (b, a)]}[opts.roles]
        for user, friend in pairs:
            if not user or not friend:
                continue
            recall, level1_facts = _recall_turns(c, user, friend, opts)
            if writer is not None:
                recall = _write_answers(recall, writer, writer_name)
            u = _user_of(c, user, friend, opts, level1_facts)
            users.append(u)
            by_session: dict[int, list[LocomoTurn]] = {}
            for t in conv.turns:
                by_session.setdefault(t.session, []).append(t)
            for n, sturns in sorted(by_session.items()):
                turns = _dialog_turns(sturns, user)
                if turns:
                    src = f"{LICENCE}: {conv.sample_id} session {n}; {user} the user, {friend}'s lines the assistant's"
                    start = session_time(sturns[0].date) or None
                    sessions.append(
                        Session(
                            id=f"{u.id}-s{n}", user=u.id, turns=turns, source=src, start=start, other_speaker=friend
                        )
                    )
            k = opts.questions_per_session
            for j in range(0, len(recall), k):
                src = f"{LICENCE}: {conv.sample_id} questions, asked by {user}; answers LoCoMo's gold"
                if any(t.generated_by for t in recall[j : j + k]):
                    src += f" (some generated by {writer_name})"
                sessions.append(Session(id=f"{u.id}-q{j // k}", user=u.id, turns=recall[j : j + k], source=src))
    return Script(users=users, sessions=sessions)


def llm_writer(llm: Completer, max_tokens: int = 80) -> AnswerWriter:
    """An AnswerWriter that asks a chat model (prompt `llm/prompts/script_answer.v1.md`) for a spoken
    sentence; an empty reply keeps the gold line."""

    def write(question: str, answer: str, facts: list[str]) -> str:
        payload = json.dumps({"question": question, "reference_answer": answer, "facts": facts}, ensure_ascii=False)
        system, user = render_prompt("script_answer", payload, 1)
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        return llm.complete(messages, max_tokens=max_tokens, temperature=0.0).content.strip().strip('"')

    return write
