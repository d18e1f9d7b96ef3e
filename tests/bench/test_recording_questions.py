"""bench memorize's questions about its recording: words from the script, and their scores."""

from __future__ import annotations

from egomem.bench._recording_questions import merges, people_of, questions, score
from egomem.bench.realtime import Line
from egomem.retrieval.ask_types import AskResult, EvidenceItem
from egomem.schemas import Episode

ORIGIN = 1.7e9  # 2023-11-14 22:13:20 UTC
LINES = [
    Line(1.0, 6.0, "ann", 0, "u1", "the lighthouse keeper painted those boats", True),
    Line(8.0, 12.0, "ann", 0, "u2", "boats again and again", True),
    Line(70.0, 75.0, "bob", 1, "u3", "a lighthouse and boats", True),
    Line(77.0, 89.0, "bob", 1, "u4", "orchards everywhere in the valley and more words cut off", False),
]


def test_words_come_from_one_utterance_of_the_script() -> None:
    qs = questions(LINES, ORIGIN)
    topical = [q for q in qs if q.kind != "at_time"]
    # u1: "keeper", "painted" are its own ("lighthouse" and "boats" are said elsewhere, "those"
    # says nothing); u2 and u3 have no word of their own; u4 was cut, so its words may be unsaid.
    assert {q.text.rsplit(" ", 1)[1].rstrip("?") for q in topical} <= {"keeper", "painted"}
    assert [q.kind for q in topical] == ["said", "who", "when"]
    assert all(q.spans == ((1.0, 6.0),) and q.speaker == "ann" for q in topical)
    at = [q for q in qs if q.kind == "at_time"]
    assert [q.text for q in at] == [
        "Who did I talk to at 22:13 on 14 November 2023?",
        "Who did I talk to at 22:14 on 14 November 2023?",
    ]
    assert at[0].spans == ((1.0, 12.0),)  # ann's visit only: bob's starts at 22:14:30


def _item(ep: str, person: str | None = None) -> EvidenceItem:
    return EvidenceItem(kind="turn", quote="x", score=1.0, round=1, episode_id=ep, person_id=person)


def test_scores_count_evidence_from_the_right_episode_or_person() -> None:
    eps = [
        Episode(id="e-ann", start=ORIGIN + 0.5, end=ORIGIN + 13.0, participants=["user-a"]),
        Episode(id="e-bob", start=ORIGIN + 69.0, end=ORIGIN + 90.0, participants=["user-b"]),
    ]
    people = people_of(LINES, eps, ORIGIN)
    assert people == {"ann": "user-a", "bob": "user-b"}
    assert merges(LINES, eps, ORIGIN) == []
    qs = [q for q in questions(LINES, ORIGIN) if q.kind in ("said", "who")]
    results = [
        AskResult(question="", answer="", answered_by="evidence", evidence=[_item("e-bob"), _item("e-ann")]),
        AskResult(question="", answer="", answered_by="none", empty=True),
    ]
    got = score(qs, results, eps, people, ORIGIN)
    assert got["said"] == {"n": 1, "hit_at_k": 1.0, "top1": 0.0, "empty": 0, "k": 2, "speaker_without_user": 0}
    assert got["who"] == {"n": 1, "hit_at_k": 0.0, "top1": 0.0, "empty": 1, "k": 0, "speaker_without_user": 0}


def test_a_merged_user_stands_for_one_speaker_only() -> None:
    # ann and bob both landed on user-a (a merge): user-a holds 3 of bob's utterance-episode
    # overlaps and 2 of ann's, so it is bob's, and ann has no user.
    eps = [
        Episode(id="e-ann", start=ORIGIN + 0.5, end=ORIGIN + 13.0, participants=["user-a"]),
        Episode(id="e-bob", start=ORIGIN + 69.0, end=ORIGIN + 90.0, participants=["user-a"]),
        Episode(id="e-bob2", start=ORIGIN + 76.0, end=ORIGIN + 78.0, participants=["user-a"]),
    ]
    people = people_of(LINES, eps, ORIGIN)
    assert people == {"bob": "user-a"}
    assert merges(LINES, eps, ORIGIN) == [["ann", "bob"]]  # the merge is named, not only counted
    who_ann = next(q for q in questions(LINES, ORIGIN) if q.kind == "who")
    assert who_ann.speaker == "ann"
    answer = AskResult(question="", answer="", answered_by="evidence", evidence=[_item("e-ann", "user-a")])
    got = score([who_ann], [answer], eps, people, ORIGIN)["who"]
    assert got["top1"] == 0.0 and got["speaker_without_user"] == 1  # the merged user is not ann


def test_at_time_is_right_only_when_it_names_who_was_there() -> None:
    eps = [
        Episode(id="e-ann", start=ORIGIN + 0.5, end=ORIGIN + 13.0, participants=["user-a"]),
        Episode(id="e-bob", start=ORIGIN + 69.0, end=ORIGIN + 90.0, participants=["user-b"]),
    ]
    people = people_of(LINES, eps, ORIGIN)
    first = next(q for q in questions(LINES, ORIGIN) if q.kind == "at_time")  # 22:13: ann only
    assert first.present == ("ann",)

    def ask(*items: EvidenceItem) -> AskResult:
        return AskResult(question="", answer="", answered_by="evidence", evidence=list(items))

    # An episode of that minute, but a fact about bob: wrong. Ann's turn: right.
    got = score([first, first], [ask(_item("e-ann", "user-b")), ask(_item("e-ann", "user-a"))], eps, people, ORIGIN)
    assert got["at_time"]["top1"] == 0.5
    # bob's episode (not at that time) is wrong, and so is any answer when nothing overlaps.
    got = score([first], [ask(_item("e-bob"))], eps, people, ORIGIN)
    assert got["at_time"]["hit_at_k"] == 0.0
