"""Face-voice linking on constructed evidence: links need enough one-sided support, split or
contrary evidence abstains, the assignment is one-to-one, and every decision serialises."""

from __future__ import annotations

import json

import pytest

from egomem.perception.diarization import Turn
from egomem.perception.face import FaceBox
from egomem.perception.people import (
    Detection,
    EvidenceAccumulator,
    FaceInWindow,
    FaceTrack,
    LinkConfig,
    WindowObservation,
    link,
    observe_windows,
    wilson_lower,
)

TALK, STILL = 0.12, 0.005  # lip activity of a talking and of a still mouth


def win(k: int, faces: dict[int, float | None], voices: dict[int, float]) -> WindowObservation:
    return WindowObservation(float(k), k + 1.0, {t: FaceInWindow(a) for t, a in faces.items()}, voices)


def test_wilson_lower_bound() -> None:
    assert wilson_lower(0, 0, 1.645) == 0.0
    assert wilson_lower(3, 3, 1.645) == pytest.approx(3 / (3 + 1.645**2), abs=1e-9)
    assert wilson_lower(2, 2, 1.645) < 0.5 < wilson_lower(3, 3, 1.645)
    assert wilson_lower(5, 10, 1.645) < 0.5


def test_one_talking_face_links_after_three_windows_and_not_before() -> None:
    two = [win(k, {0: TALK}, {0: 1.0}) for k in range(2)]
    d2 = link(two)
    assert not d2.links
    assert d2.abstentions[0].voice == 0 and "too little" in d2.abstentions[0].reason
    d3 = link([*two, win(2, {0: TALK}, {0: 1.0})])
    assert [(lk.track, lk.voice) for lk in d3.links] == [(0, 0)]
    ev = d3.links[0].evidence
    assert len(ev.support) == 3 and ev.cooccurrence_s == 3.0 and ev.against == []
    assert d3.links[0].confidence > 0.5


def test_talking_face_beside_a_listening_one_links_the_talker() -> None:
    ws = [win(k, {0: STILL, 1: TALK}, {0: 1.0}) for k in range(4)]
    d = link(ws)
    assert [(lk.track, lk.voice) for lk in d.links] == [(1, 0)]
    listener = next(p for p in d.pairs if p.track == 0)
    assert len(listener.against) == 4 and listener.cooccurrence_s == 0.0


def test_split_evidence_abstains() -> None:
    # The voice is heard while face 0 talks alone (3 windows) and while face 1 talks alone (3
    # windows, another shot): two people for one voice; no link.
    ws = [win(k, {0: TALK}, {0: 1.0}) for k in range(3)] + [win(k, {1: TALK}, {0: 1.0}) for k in range(3, 6)]
    d = link(ws)
    assert not d.links
    assert "split" in d.abstentions[0].reason


def test_two_moving_mouths_are_ambiguous() -> None:
    d = link([win(k, {0: TALK, 1: TALK}, {0: 1.0}) for k in range(6)])
    assert not d.links
    assert all(len(p.ambiguous) == 6 and not p.support for p in d.pairs)


def test_unmeasured_neighbour_makes_the_window_ambiguous() -> None:
    d = link([win(k, {0: TALK, 1: None}, {0: 1.0}) for k in range(6)])
    assert not d.links
    p0 = next(p for p in d.pairs if p.track == 0)
    p1 = next(p for p in d.pairs if p.track == 1)
    assert len(p0.ambiguous) == 6 and len(p1.unmeasured) == 6


def test_still_face_and_a_voice_off_screen_are_not_linked() -> None:
    # A photo or a TV picture with someone speaking off screen: the only face never moves its lips.
    d = link([win(k, {0: STILL}, {0: 1.0}) for k in range(10)])
    assert not d.links
    p = d.pairs[0]
    assert p.cooccurrence_s == 10.0 and len(p.against) == 10


def test_lips_moving_while_the_voice_is_silent_count_against() -> None:
    ws = [win(k, {0: TALK}, {0: 1.0}) for k in range(4)] + [win(k, {0: TALK}, {0: 0.0}) for k in range(4, 8)]
    d = link(ws)
    assert not d.links
    p = d.pairs[0]
    assert len(p.support) == 4 and len(p.against) == 4 and p.lip_off


def test_one_to_one_a_face_gets_one_voice() -> None:
    # Face 0 talks alone while voice 0 speaks (5 windows) and while voice 1 speaks (3 windows): one
    # person cannot be two voices; the stronger pair links, the other voice stays open and says why.
    ws = [win(k, {0: TALK}, {0: 1.0, 1: 0.0}) for k in range(5)]
    ws += [win(k, {0: TALK}, {0: 0.0, 1: 1.0}) for k in range(5, 8)]
    d = link(ws)
    assert len(d.links) <= 1
    assert len({lk.voice for lk in d.links}) == len(d.links) and len({lk.track for lk in d.links}) == len(d.links)


def test_two_people_two_voices_two_links() -> None:
    ws = [win(k, {0: TALK, 1: STILL}, {0: 1.0, 1: 0.0}) for k in range(4)]
    ws += [win(k, {0: STILL, 1: TALK}, {0: 0.0, 1: 1.0}) for k in range(4, 8)]
    d = link(ws)
    assert sorted((lk.track, lk.voice) for lk in d.links) == [(0, 0), (1, 1)]
    assert d.linked_voice(1) == 1 and d.linked_track(0) == 0


def test_overlapping_voices_are_not_used() -> None:
    d = link([win(k, {0: TALK}, {0: 1.0, 1: 1.0}) for k in range(6)])
    assert not d.links and not d.pairs


def test_no_voice_and_no_face() -> None:
    assert not link([win(k, {0: TALK}, {}) for k in range(5)]).pairs
    assert not link([win(k, {}, {0: 1.0}) for k in range(5)]).links
    assert not link([]).links


def test_decision_serialises_with_its_evidence() -> None:
    d = link([win(k, {0: STILL, 1: TALK}, {0: 1.0}) for k in range(4)])
    data = json.loads(json.dumps(d.to_dict()))
    ev = data["links"][0]["evidence"]
    assert ev["support_windows"] == 4 and ev["support_at_s"] == [0.0, 1.0, 2.0, 3.0]
    assert ev["lip_activity_voice_speaking"] == pytest.approx(TALK)
    assert {p["track"] for p in data["pairs"]} == {0, 1}


def test_accumulator_is_incremental() -> None:
    acc = EvidenceAccumulator(LinkConfig())
    for k in range(2):
        acc.add(win(k, {0: TALK}, {0: 1.0}))
    assert not acc.decide().links
    acc.add(win(2, {0: TALK}, {0: 1.0}))
    assert acc.decide().links and acc.windows == 3


def _track(tid: int, times: list[float], openings: list[float | None]) -> FaceTrack:
    box = FaceBox(100, 200, 200, 100)
    dets = [Detection(t, box, 1.0, "base", o) for t, o in zip(times, openings, strict=True)]
    return FaceTrack(tid, dets, [(times[0], __import__("numpy").zeros(128, "float32"))])


def test_observe_windows_from_tracks_and_turns() -> None:
    times = [i * 0.2 for i in range(15)]  # 0.0 .. 2.8 s at 5 fps
    talking = _track(0, times, [0.1 if i % 2 else 0.3 for i in range(15)])
    small = _track(1, times[:5], [None] * 5)
    turns = [Turn(0.0, 1.6, 0), Turn(2.0, 3.0, 1)]
    ws = observe_windows([talking, small], turns, 0.0, 3.0, fps=5.0)
    assert [w.start for w in ws] == [0.0, 1.0, 2.0]
    assert ws[0].faces[0].activity == pytest.approx(0.2) and ws[0].faces[1].activity is None
    assert 1 not in ws[1].faces
    assert ws[0].voices == {0: 1.0, 1: 0.0}
    assert ws[1].voices[0] == pytest.approx(0.6) and ws[2].voices[1] == pytest.approx(1.0)
