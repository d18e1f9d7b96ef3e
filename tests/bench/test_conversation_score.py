"""The conversation benchmark's scorer on a tiny hand-built store, and its matching rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from egomem.bench.convo.drive import _map_episodes
from egomem.bench.convo.media import RenderedDay, Visit
from egomem.bench.convo.score import Observation, metrics, score, states
from egomem.schemas import Episode, Fact, FactKind, Relation
from egomem.store.sqlite import SQLiteStore
from egomem_eval.convo.bank import JOBS, Person
from egomem_eval.convo.scenario import GoldChange, GoldFact, GoldRelation, Level2, Scenario, Session, Utterance


def _fact(fid: str, person: str, kind: str, keys: tuple[tuple[str, ...], ...], **kw: object) -> GoldFact:
    return GoldFact(fid, person, kind, fid, keys, **kw)  # type: ignore[arg-type]


def _scenario() -> Scenario:
    people = [Person(n, g, JOBS[0], "Paris", [], [], [], []) for n, g in (("Anna", "f"), ("Ben", "m"))]
    sc = Scenario("dev", 0, people, mentioned=["Mia"])
    hello = [Utterance("Hello.", "t", "smalltalk")]
    sc.sessions = [Session(d, p, hello) for d in (1, 2) for p in ("Anna", "Ben")]
    sc.facts = [
        _fact("a.job", "Anna", "job", (("nurse",),)),
        _fact("a.like", "Anna", "like", (("jazz",),)),
        _fact("a.dislike", "Anna", "dislike", (("olive",),), negative=True),
        _fact("b.home", "Ben", "home", (("paris",),), retracted=True),
        _fact("b.home2", "Ben", "home", (("lisbon",),), day=2),
    ]
    sc.changes = [GoldChange("Ben", "b.home", "b.home2")]
    sc.relations = [
        GoldRelation("Anna", "Ben", frozenset({"brother", "sibling"}), False, True),
        GoldRelation("Ben", "Anna", frozenset({"sister", "sibling"}), True, True),
        GoldRelation("Anna", "Mia", frozenset({"daughter", "child"}), False, False),
    ]
    sc.level2 = [Level2("Ben", "Anna", "a.like")]
    return sc


def test_scorer_gives_the_exact_figures_on_a_hand_built_store(store: SQLiteStore) -> None:
    anna, ben = store.create_user("Anna").id, store.create_user("Ben").id
    zed = store.create_user("Zed", placeholder=True).id  # nobody named Zed: a false person
    for uid, kind, text in (
        (anna, FactKind.FACT, "works as a nurse"),
        (anna, FactKind.PREFERENCE, "likes jazz"),
        (anna, FactKind.PREFERENCE, "likes olives"),  # she hates them: wrong, and said by nobody
        (anna, FactKind.SUMMARY, "talked about work"),  # summaries are not scored
        (ben, FactKind.FACT, "lives in Lisbon"),
    ):
        store.add_fact(Fact(user_id=uid, kind=kind, text=text))
    paris = store.add_fact(Fact(user_id=ben, text="lives in Paris"))
    store.close_fact(paris.id)  # the move was applied
    store.add_relation(Relation(subject_id=anna, relation="brother", object_id=ben))
    store.add_relation(Relation(subject_id=ben, relation="sister", object_id=anna))  # the inverse
    store.add_relation(Relation(subject_id=ben, relation="friend", object_id=zed))  # a false relation
    obs = Observation(
        person_users={"Anna": {anna}, "Ben": {ben}},
        day1_facts={"Anna": [], "Ben": ["lives in Paris"]},
        greetings={"Anna": ["Hi Anna, good to see you again!"], "Ben": ["Hello! I don't think we've met."]},
        answers={"Ben": "Yes, your sister Anna likes jazz."},
        cpu_s=[1.0, 3.0],
    )
    m = metrics(score(_scenario(), store, obs))
    assert m["name_recall"] == 1.0
    assert m["fact_recall"] == pytest.approx(3 / 4)  # nurse, jazz, Lisbon of nurse, jazz, hates olives, Lisbon
    assert m["fact_precision"] == pytest.approx(3 / 4)  # "likes olives" is not right
    assert m["relation_recall"] == pytest.approx(2 / 3)  # Anna's daughter Mia is missing
    assert m["relation_recall_inverse"] == 1.0
    assert m["updates_applied"] == 1.0
    assert m["false_memories_per_session"] == pytest.approx(3 / 4)  # olives fact, Ben-Zed edge, Zed
    assert m["greeting_by_name"] == 0.5
    assert m["level2_correct"] == 1.0
    assert m["extract_cpu_s_per_session"] == 2.0
    assert (m["merges"], m["splits"]) == (0, 0)


def test_a_fact_on_the_wrong_person_is_a_false_memory_and_a_name_earns_nothing(store: SQLiteStore) -> None:
    anna, ben = store.create_user("Anna").id, store.create_user("Ben").id
    store.add_fact(Fact(user_id=anna, text="works as a nurse"))  # right
    store.add_fact(Fact(user_id=ben, text="works as a nurse"))  # Anna's job written onto Ben: wrong
    store.add_fact(Fact(user_id=anna, text="knows Ben and Mia"))  # names people, states nothing
    store.add_fact(Fact(user_id=anna, text="has a brother, Ben"))  # her relation, in words: right
    obs = Observation(person_users={"Anna": {anna}, "Ben": {ben}})
    m = metrics(score(_scenario(), store, obs))
    assert m["fact_precision"] == pytest.approx(2 / 4)
    # Ben's nurse fact and Anna's "knows Ben and Mia": 2 false memories over 4 sessions.
    assert m["false_memories_per_session"] == pytest.approx(2 / 4)


def test_merged_and_split_people_are_counted(store: SQLiteStore) -> None:
    one, two = store.create_user("Anna").id, store.create_user(None).id
    obs = Observation(person_users={"Anna": {one, two}, "Ben": {one}})
    m = metrics(score(_scenario(), store, obs))
    assert (m["merges"], m["splits"]) == (1, 1)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("works as a nurse", True),
        ("is a nurse at the hospital", True),
        ("used to be a nurse", False),  # no longer holds
        ("is not a nurse", False),
        ("works as a teacher", False),
        ("nursemaid-ish", True),  # the rule's known looseness: a stem with up to 4 more letters
    ],
)
def test_matching_rule(text: str, expected: bool) -> None:
    assert states(text, _fact("f", "Anna", "job", (("nurse",),))) is expected


def test_matching_rule_polarity_of_dislikes() -> None:
    dislike = _fact("d", "Anna", "dislike", (("olive",),), negative=True)
    assert states("hates olives", dislike) and states("doesn't like olives", dislike)
    assert not states("likes olives", dislike)


def test_an_episode_holding_two_visits_turns_maps_to_both_people(store: SQLiteStore) -> None:
    """`bench conversation` maps each episode to the visits whose speech it holds: an episode with
    Anna's and Ben's turns (one session spanning both visits, written onto Anna) counts as a merge."""
    anna = store.create_user("Anna").id
    origin = 1000.0
    day = RenderedDay(
        Path("day1.mp4"),
        111.0,
        [Visit("Anna", 3.0, 58.0, [(5.0, 8.0), (50.0, 54.0)]), Visit("Ben", 64.0, 111.0, [(66.0, 68.0)])],
    )
    both = store.add_episode(Episode(start=origin + 4.96, end=origin + 110.56, participants=[anna])).id
    obs = Observation(person_users={"Anna": set(), "Ben": set()})
    _map_episodes(day, store, origin, [both], obs)
    assert obs.person_users == {"Anna": {anna}, "Ben": {anna}}
    tally = score(_scenario(), store, obs)
    assert tally.total("merges") == 1
    # An episode of Anna's own turns (ending before Ben spoke) maps to her alone.
    own = store.add_episode(Episode(start=origin + 4.96, end=origin + 60.0, participants=[anna])).id
    obs = Observation(person_users={"Anna": set(), "Ben": set()})
    _map_episodes(day, store, origin, [own], obs)
    assert obs.person_users == {"Anna": {anna}, "Ben": set()}
