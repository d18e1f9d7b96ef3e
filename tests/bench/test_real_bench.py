"""`egomem bench real`: each scorer fed a wrong answer counts it wrong; the annotation loads and
is split by recording. No models: references and product outputs written here."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from egomem.bench._real_data import load_recordings, parse_recording
from egomem.bench._real_score import (
    HypTurn,
    Memory,
    RefFact,
    RefTurn,
    assign_people,
    der,
    dropped_turns,
    held_dropped_turns,
    identity_across,
    memory_merges,
    merge_turns,
    repeated_phrase,
    score_facts,
    wer_counts,
)
from egomem.bench.real import hyp_turns, pooled
from egomem.errors import InputError
from egomem.runtime.agent import UNKNOWN_VOICE
from egomem.runtime.timeline import Timeline
from egomem.schemas import Episode

# Two people taking turns: Diane 0-10 s, Sheila 10-20 s.
REF = [RefTurn(0.0, 10.0, "diane"), RefTurn(10.0, 20.0, "sheila")]
FACTS = [
    RefFact("diane", "lives in New Jersey", ("new jersey|jersey",)),
    RefFact("sheila", "lives in Texas", ("texas",)),
]


def _hyp(person_a: str | None, person_b: str | None, kept: bool = True) -> list[HypTurn]:
    return [HypTurn(0.5, 9.5, "this is diane", person_a, kept), HypTurn(10.5, 19.5, "i'm sheila", person_b, kept)]


def test_people_right_no_merge_no_split() -> None:
    pm = assign_people(REF, _hyp("u1", "u2"), ["u1", "u2"])
    assert pm.person_to_speaker == {"u1": "diane", "u2": "sheila"}
    assert (pm.merges, pm.splits) == (0, 0)


def test_two_true_speakers_in_one_person_is_a_merge() -> None:
    pm = assign_people(REF, _hyp("u1", "u1"), ["u1"])
    assert pm.merges == 1 and pm.merged == [["diane", "sheila"]]
    assert pm.splits == 0


def test_a_merge_counts_for_memory_only_when_its_turns_were_kept() -> None:
    # Held in an unsure placeholder and dropped: a merge of attribution, nothing written.
    assert memory_merges(REF, _hyp("unsure", "unsure", kept=False), ["unsure"]) == 0
    assert assign_people(REF, _hyp("unsure", "unsure", kept=False), ["unsure"]).merges == 1
    # Kept: Sheila's words are in Diane's memory.
    assert memory_merges(REF, _hyp("u1", "u1"), ["u1"]) == 1
    # One kept, one held: each true person's kept speech is on one person; no merge in memory.
    hyp = [HypTurn(0.5, 9.5, "a", "u1", True), HypTurn(10.5, 19.5, "b", "u1", False)]
    assert memory_merges(REF, hyp, ["u1"]) == 0


def test_one_speaker_over_two_persons_is_a_split_and_a_ghost_maps_to_no_one() -> None:
    hyp = [HypTurn(0.5, 4.5, "a", "u1", True), HypTurn(5.0, 9.5, "b", "u2", True), HypTurn(10.5, 19.5, "c", "u3", True)]
    pm = assign_people(REF, hyp, ["u1", "u2", "u3", "ghost"])
    assert pm.splits == 1 and pm.split == [["u1", "u2"]]
    assert pm.person_to_speaker["ghost"] is None


def test_identity_across_recordings_counts_a_caller_taken_for_a_participant() -> None:
    runs = [
        ("call", {"diane": "u1", "sheila": "u2"}, False),
        ("meet1", {"MEE009": "u1", "MEE012": "u3"}, True),  # Diane's person took a meeting participant
        ("meet2", {"MEE009": "u4", "MEE012": "u3"}, True),  # MEE009 met again, as a new person
    ]
    across = identity_across(runs)
    assert across["merges"] == 1 and across["merged"] == [["MEE009", "call/diane"]]
    assert across["splits"] == 1 and across["split"] == ["MEE009"]
    # Labels that are only a recording's own never join: two recordings' "speakerA" are two people.
    local = identity_across([("a", {"speakerA": "u1"}, False), ("b", {"speakerA": "u2"}, False)])
    assert (local["merges"], local["splits"]) == (0, 0)


def test_fact_on_the_right_person_counts() -> None:
    mem = [Memory("u1", "Lives in New Jersey.", "fact"), Memory("u2", "lives in Texas", "fact")]
    s = score_facts(FACTS, mem, {"u1": "diane", "u2": "sheila"})
    assert (s.found, s.correct, s.recall, s.precision) == (2, 2, 1.0, 1.0)


def test_fact_on_the_wrong_person_is_false() -> None:
    # Diane's New Jersey stored on Sheila's person: false, and Diane's fact is missed.
    mem = [Memory("u2", "lives in New Jersey", "fact")]
    s = score_facts(FACTS, mem, {"u1": "diane", "u2": "sheila"})
    assert s.correct == 0 and s.wrong_person == 1 and s.precision == 0.0 and s.recall == 0.0
    assert s.false_facts == ["lives in New Jersey (on sheila)"]


def test_fact_on_a_merged_or_ghost_person_and_an_unannotated_fact_are_false() -> None:
    mem = [
        Memory("ghost", "lives in Texas", "fact"),  # a person who is no true speaker
        Memory("u1", "likes jazz", "fact"),  # not in the annotation
        Memory(None, "lives in Texas", "fact"),
        Memory("u1", "The user talked with the assistant.", "summary"),  # summaries are not facts
    ]
    s = score_facts(FACTS, mem, {"u1": "diane", "ghost": None})
    assert s.remembered == 3 and s.correct == 0 and s.precision == 0.0


def test_a_fact_needs_every_keyword_group_as_whole_words() -> None:
    facts = [RefFact("diane", "from Chicago, in New Jersey now", ("chicago", "new jersey|jersey"))]
    assert score_facts(facts, [Memory("u1", "is from Chicago", "fact")], {"u1": "diane"}).correct == 0
    assert score_facts(facts, [Memory("u1", "from Chicago, now in Jersey", "fact")], {"u1": "diane"}).correct == 1
    # "texas" inside another word is not the keyword.
    assert score_facts(FACTS, [Memory("u2", "texasville", "fact")], {"u2": "sheila"}).correct == 0


def test_a_turn_transcribed_but_in_no_session_is_dropped() -> None:
    ref = merge_turns(REF)
    assert [t.speaker for t in dropped_turns(ref, _hyp("u1", "u2"))] == []
    # The second turn was transcribed but never reached a stored session: dropped.
    hyp = [HypTurn(0.5, 9.5, "this is diane", "u1", True), HypTurn(10.5, 19.5, "i'm sheila", "u1", False)]
    assert [t.speaker for t in dropped_turns(ref, hyp)] == ["sheila"]
    assert len(dropped_turns(ref, [])) == 2  # nothing transcribed at all
    # A short "mm" is not a droppable turn.
    assert dropped_turns([RefTurn(0.0, 0.3, "x")], []) == []


def test_a_turn_of_a_held_then_dropped_session_is_counted_apart() -> None:
    ref = merge_turns(REF)
    held = HypTurn(10.5, 19.5, "i'm sheila", None, False, held_dropped=True)
    hyp = [HypTurn(0.5, 9.5, "this is diane", "u1", True), held]
    dropped = dropped_turns(ref, hyp)
    assert [t.speaker for t in dropped] == ["sheila"]  # still a dropped turn
    assert [t.speaker for t in held_dropped_turns(dropped, hyp)] == ["sheila"]
    # A turn dropped for another cause is not counted as held.
    plain = [hyp[0], HypTurn(10.5, 19.5, "i'm sheila", None, False)]
    assert held_dropped_turns(dropped_turns(ref, plain), plain) == []


def test_merge_turns_joins_one_speakers_close_segments_only() -> None:
    turns = [RefTurn(0.0, 1.0, "a"), RefTurn(1.2, 2.0, "a"), RefTurn(3.0, 4.0, "a"), RefTurn(1.0, 1.1, "b")]
    assert merge_turns(turns) == [RefTurn(0.0, 2.0, "a"), RefTurn(1.0, 1.1, "b"), RefTurn(3.0, 4.0, "a")]


def test_hyp_turns_take_the_person_of_the_episode_that_kept_them() -> None:
    origin = 1000.0
    ep = Episode(start=origin + 0.0, end=origin + 10.0, participants=["u1"], user_transcript="This is Diane.")
    heard = [(0.5, 9.5, "This is Diane.", None), (10.5, 19.5, "I'm Sheila.", "u2"), (12.0, 13.0, "hm", UNKNOWN_VOICE)]
    tl = Timeline()
    tl.add(9.5, "heard", text="This is Diane.", user="u9")
    turns = hyp_turns(heard, [ep], origin, tl)
    assert [(t.person, t.kept, t.unknown_voice) for t in turns] == [
        ("u1", True, False),
        ("u2", False, False),
        (None, False, True),
    ]


def test_der_perfect_and_one_person_for_two() -> None:
    assert der(REF, _hyp("u1", "u2"), 20.0)["der"] == pytest.approx(0.1)  # 2 x 0.5 s missed at each end
    wrong = der(REF, [HypTurn(0.0, 20.0, "x", "u1", True)], 20.0)
    assert wrong["der"] == pytest.approx(0.5) and wrong["confusion"] == pytest.approx(10.0)


def test_wer_and_repetition() -> None:
    assert wer_counts(["I'm Sheila in Texas."], ["im sheila and texas"]) == (2, 4)
    assert repeated_phrase("No, I didn't. No, I didn't. No, I didn't. No, I didn't. Go ahead.") == 4
    assert repeated_phrase("Hello? Hello? Oh, hello.") == 2
    assert repeated_phrase("a b c d") == 1


def test_pooled_weights_by_words_and_seconds() -> None:
    base = {"split": "test", "der_parts": {"total": 10.0}, "max_repeat": 1, "merges": 0, "splits": 0}
    per = {
        "a": {**base, "duration_s": 10.0, "wall_s": 5.0, "der": 0.2, "wer_edits": 1, "wer_words": 10, "wer": 0.1,
              "base_wer_edits": 2, "facts_annotated": 2, "facts_found": 1, "facts_remembered": 4, "facts_correct": 1,
              "dropped_turns": 1, "ref_turns": 3, "people_found": 1, "people_true": 2, "assistant_memories": 1},
        "b": {**base, "duration_s": 30.0, "wall_s": 15.0, "der": 0.6, "facts_annotated": 0, "facts_found": 0,
              "facts_remembered": 0, "facts_correct": 0, "dropped_turns": 0, "ref_turns": 2, "people_found": 2,
              "people_true": 2, "assistant_memories": 0, "merges": 1},
    }  # fmt: skip
    p = pooled(per)
    assert p["wer"] == 0.1 and p["base_wer"] == 0.2 and p["der"] == pytest.approx(0.4) and p["rtf"] == 0.5
    assert (p["fact_recall"], p["fact_precision"], p["dropped_turns"], p["merges"]) == (0.5, 0.25, 1, 1)
    assert p["memory_merges"] == 0  # absent from both recordings' rows: none counted


def test_annotation_errors_are_clear(tmp_path: Path) -> None:
    rec = {"id": "x", "path": "x.wav", "split": "test", "turns": [[0, 1, "a"]]}
    with pytest.raises(InputError, match="who never speak"):
        parse_recording({**rec, "facts": [{"person": "b", "text": "t", "keywords": ["t"]}]}, tmp_path)
    with pytest.raises(InputError, match="split"):
        parse_recording({**rec, "split": "train"}, tmp_path)
    (tmp_path / "a.json").write_text(json.dumps({"recordings": [rec]}))
    with pytest.raises(InputError, match="audio not found"):
        load_recordings(tmp_path, tmp_path / "a.json")
    # The packaged annotation under a data root that lacks the recordings (the wrong --data): one line.
    with pytest.raises(InputError, match="under the data root"):
        load_recordings(tmp_path)


def test_packaged_annotation_is_split_by_recording(shared_data) -> None:
    root = shared_data("speech_pyannote_diarization").parent
    recs = load_recordings(root)
    assert len(recs) >= 20 and {r.split for r in recs} == {"dev", "test"}
    assert all(r.source and r.facts_from for r in recs)
    sample = next(r for r in recs if r.id == "call-sample")
    assert sample.split == "test" and sample.transcript_kind == "reference" and len(sample.transcript) == 13
    # The STM's names are mapped onto the RTTM's labels, so transcripts and facts share speakers.
    assert {x.speaker for x in sample.transcript} == {t.speaker for t in sample.turns}
    assert [r.id for r in recs if r.quick]


def test_memories_of_a_run_only_and_each_summary_once(tmp_path: Path) -> None:
    from egomem.bench.real import memories
    from egomem.schemas import Fact, FactKind
    from egomem.store.sqlite import SQLiteStore

    store = SQLiteStore(tmp_path / "m.db")
    try:
        old = store.create_user("Old")
        store.add_fact(Fact(user_id=old.id, text="likes tea"))
        names_before = {old.id: "Old"}
        store.add_episode(Episode(start=1.0, end=2.0, participants=[old.id], summary="old"))
        time.sleep(0.01)
        since = time.time()  # the run starts
        u = store.create_user("Diane")
        store.create_user("John", placeholder=True)  # named in talk, never met: not a person found
        store.add_fact(Fact(user_id=u.id, text="lives in New Jersey"))
        summary = "Diane talked about New Jersey."
        store.add_fact(Fact(user_id=u.id, kind=FactKind.SUMMARY, text=summary))
        store.add_episode(Episode(start=200.0, end=210.0, participants=[u.id], summary=summary))
        mems, people = memories(store, since)
        # "Old" heard again in this run: a person found, but the name was known before, not learnt now.
        again, again_people = memories(store, since, {old.id}, names_before)
    finally:
        store.close()
    assert people == [u.id]  # "Old" was created before the run and not heard in it
    assert sorted(again_people) == sorted([u.id, old.id]) and "name Old" not in {m.text for m in again}
    assert sorted((m.kind, m.text) for m in mems) == [
        ("fact", "lives in New Jersey"),
        ("name", "name Diane"),
        ("summary", summary),
    ]
