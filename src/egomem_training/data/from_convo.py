"""Scripts from the conversation benchmark's generator (egomem_eval/convo/scenario.py).

Each scenario's day-2 sessions become script sessions: by then the assistant knows every
person from day 1, so the profile is what a perfect memory holds after day 1 (job, home,
likes and dislikes, habits, named relatives and the other people met), and the social
graph links the people of the scenario with the facts about them. The users' lines are
the generator's; the assistant's lines are written here by rules (labelled so in each
session's `source`):
- `greet_again` -> level 1, a greeting by name;
- a change (new job, a move, a dropped like or habit) -> level 1, what was remembered;
- the question about a related person -> level 2: the gold `<retr>` is the relation word
  and the question's content words, the supporting fact the gold fact, the answer states it;
- small talk and jokes -> level 0.
Day-1 sessions (introductions) are left out: the script format has one profile per user,
and on day 1 the memory is still empty.

Use the `dev` split for training data: `test` scenarios are the benchmark's.
"""

from __future__ import annotations

import re

from egomem_eval.convo.scenario import GoldRelation, Scenario, generate
from egomem_training.data.script import Profile, Relation, Retr, Script, Session, Turn, User

# Words that name a relation too broadly to be the one the user said.
_GENERIC = {"sibling", "child", "parent", "partner", "spouse", "coworker", "co-worker", "best friend", "neighbor"}
_STOP = set(
    "a an the my your his her their our do does did you remember what which where who is are was were "
    "s it's what's there any again me i to of in on at for and or with how about know tell".split()
)
_CHANGE_KINDS = ("change_job", "move", "retract_like", "retract_habit")


def _relation_word(rel: GoldRelation) -> str:
    return min(rel.words, key=lambda w: (w in _GENERIC, w))


def _content_words(text: str, drop: set[str]) -> list[str]:
    words = re.findall(r"[a-z][a-z'-]*", text.lower())
    return [w for w in dict.fromkeys(words) if w not in _STOP and w not in drop]


def _uid(sc: Scenario, name: str) -> str:
    return f"convo-{sc.split}{sc.seed}-{name.lower()}"


def _user(sc: Scenario, name: str) -> User:
    day1 = [f for f in sc.facts if f.person == name and f.day == 1]
    about = [f"{name} {f.text}" for f in day1 if f.kind in ("job", "home")]
    prefs = [f"{name} {f.text}" for f in day1 if f.kind in ("like", "dislike")]
    habits = [f"{name} {f.text}" for f in day1 if f.kind == "habit"]
    social = [
        Relation(
            name=r.obj,
            relation=_relation_word(r),
            facts=[f"{r.obj} {f.text}" for f in sc.facts if f.person == r.obj and f.day == 1] if r.obj_met else [],
        )
        for r in sc.relations
        if r.subject == name
    ]
    return User(
        id=_uid(sc, name), name=name, profile=Profile(about=about, facts=habits, preferences=prefs), social=social
    )


def _turns(sc: Scenario, person: str, utterances: list[tuple[str, str]]) -> list[Turn]:
    turns: list[Turn] = []
    asked = next((q for q in sc.level2 if q.asker == person), None)
    change = next((c for c in sc.changes if c.person == person), None)
    for kind, text in utterances:
        if kind == "greet_again":
            turns.append(Turn(user=text, assistant=f"Welcome back, {person}! Good to see you again.", level=1))
        elif kind in _CHANGE_KINDS and change is not None:
            old = sc.fact(change.old)
            new = f" Now: {person} {sc.fact(change.new).text}." if change.new else ""
            said = f"Thanks for telling me. I had noted that {person} {old.text}; I will update that.{new}"
            turns.append(Turn(user=text, assistant=said, level=1))
        elif kind.startswith("ask_") and asked is not None:
            fact = sc.fact(asked.fact)
            rel = next(r for r in sc.relations if r.subject == person and r.obj == asked.about)
            word = _relation_word(rel)
            supporting = f"{asked.about} {fact.text}"
            turns.append(
                Turn(
                    user=text,
                    assistant=f"Your {word} {supporting}.",
                    level=2,
                    retr=Retr(relations=[word], keywords=_content_words(text, set(rel.words))),
                    facts=[supporting],
                )
            )
        else:
            turns.append(Turn(user=text, assistant="Ha, I see. Anything else on your mind?", level=0))
    return turns


def script_from_convo(split: str, seeds: list[int]) -> Script:
    """One script from the day-2 sessions of scenarios `seeds` of `split`."""
    users: list[User] = []
    sessions: list[Session] = []
    for seed in seeds:
        sc = generate(split, seed)
        users += [_user(sc, p.name) for p in sc.people]
        for k, s in enumerate(x for x in sc.sessions if x.day == 2):
            sessions.append(
                Session(
                    id=f"convo-{split}{seed}-d2-{k}",
                    user=_uid(sc, s.person),
                    turns=_turns(sc, s.person, [(u.kind, u.text) for u in s.turns]),
                    source=f"egomem bench convo generator ({split}:{seed}); assistant lines by rules",
                )
            )
    return Script(users=users, sessions=sessions)
