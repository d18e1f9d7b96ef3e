"""Dialog: turn detection on real speech, the template responder's behaviour."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from egomem.dialog.base import UserTurn
from egomem.dialog.template import TemplateResponder, parse_level1
from egomem.dialog.turns import TurnDetector
from egomem.perception.audio import SAMPLE_RATE, load_audio
from egomem.perception.vad import SileroVAD
from egomem.schemas import MemChunk


@pytest.fixture(scope="module")
def vad() -> SileroVAD:
    return SileroVAD()


def test_turn_detector_finds_two_utterances_in_real_speech(vad: SileroVAD, shared_data: Callable[[str], Path]) -> None:
    files = sorted((shared_data("speech_librispeech_test_other_10spk")).rglob("*.flac"))[:2]
    a, b = (load_audio(f) for f in files)
    gap = np.zeros(2 * SAMPLE_RATE, np.float32)
    stream = np.concatenate([gap, a, gap, b, gap])
    det = TurnDetector(vad, end_silence_s=1.5)
    turns = []
    for i in range(0, stream.size, 1280):  # 80 ms steps, as the agent feeds it
        turns += det.feed(stream[i : i + 1280])
    turns += det.flush()
    assert len(turns) == 2
    assert turns[0].start == pytest.approx(2.0, abs=0.7)
    assert turns[1].start == pytest.approx(4.0 + a.size / SAMPLE_RATE, abs=0.7)
    assert turns[0].audio.size / SAMPLE_RATE == pytest.approx(turns[0].end - turns[0].start + 0.4, abs=0.1)


def test_turn_detector_ignores_silence_and_noise(vad: SileroVAD) -> None:
    det = TurnDetector(vad)
    rng = np.random.default_rng(0)
    out = []
    for _ in range(50):
        out += det.feed((rng.standard_normal(1280) * 0.01).astype(np.float32))
        out += det.feed(np.zeros(1280, np.float32))
    assert out + det.flush() == []


def level1(user: str | None, text: str) -> MemChunk:
    return MemChunk(level=1, text=text, tokens=len(text.split()), user_id=user)


def test_parse_level1() -> None:
    name, lines = parse_level1("Current user: Emily\nFacts:\n- Emily is a nurse\nPreferences:\n- loves hiking")
    assert name == "Emily" and lines == ["Emily is a nurse", "loves hiking"]
    assert parse_level1("Current user: name not known yet")[0] is None


def test_greets_known_user_by_name_once_and_recalls_a_fact() -> None:
    m = TemplateResponder()
    assert "".join(m.proactive(0.0)) == ""
    m.on_memchunk(level1("u1", "Current user: Emily\nPreferences:\n- loves hiking"))
    greeting = "".join(m.proactive(1.0))
    assert greeting == "Hi Emily, good to see you again! Last time you told me you love hiking."
    assert "".join(m.proactive(2.0)) == ""  # once per arrival
    m.on_memchunk(level1("u2", "Current user: name not known yet"))
    assert "What's your name" in "".join(m.proactive(3.0))


def test_question_about_related_people_emits_retr_then_answers_from_level2() -> None:
    m = TemplateResponder()
    m.on_memchunk(level1("u1", "Current user: Emily"))
    gen = m.on_user_turn(UserTurn("do any of my colleagues love tennis", 0.0, 1.0, "u1"))
    out = []
    for tok in gen:
        out.append(tok)
        if tok.endswith("<answer>"):  # what the agent does when the query completes
            m.on_memchunk(MemChunk(level=2, text="- John, colleague: John loves tennis\n- Ana, colleague: likes chess"))
    text = "".join(out)
    query, answer = text.split("<answer>")
    assert query == "<retr>:\ncolleague\nlove, tennis"
    assert answer == "Yes, your colleague John loves tennis."


def test_unanswerable_question_says_so() -> None:
    m = TemplateResponder()
    text = "".join(m.on_user_turn(UserTurn("does my sister like jazz", 0.0, 1.0)))
    assert text.endswith("I don't remember anything like that about your sisters.")
    assert "".join(m.on_user_turn(UserTurn("   ", 0, 1))) == ""


def test_introduction_before_identity_is_not_asked_again() -> None:
    m = TemplateResponder()
    assert "".join(m.on_user_turn(UserTurn("hi my name is emily", 0.0, 1.0))) == "Nice to meet you, Emily."
    m.on_memchunk(level1("u9", "Current user: name not known yet"))
    assert "".join(m.proactive(2.0)) == ""  # no "what's your name?" right after she said it
    assert "Nice to meet you" not in "".join(m.on_user_turn(UserTurn("i'm a nurse at the hospital", 3, 4)))


def test_second_person() -> None:
    from egomem.dialog.template import second_person

    assert second_person("works as a nurse") == "you work as a nurse"
    assert second_person("is allergic to peanuts") == "you are allergic to peanuts"
    assert second_person("studies law") == "you study law"
    assert second_person("watches films") == "you watch films"
    assert second_person("goes running every week") == "you go running every week"


def test_new_name_while_identity_still_shows_the_last_person() -> None:
    m = TemplateResponder()
    m.on_memchunk(level1("u1", "Current user: Emily"))
    "".join(m.proactive(0))
    assert "".join(m.on_user_turn(UserTurn("hello my name is john", 1, 2))) == "Nice to meet you, John."
    m.on_memchunk(level1("u2", "Current user: name not known yet"))
    assert "".join(m.proactive(3.0)) == ""
