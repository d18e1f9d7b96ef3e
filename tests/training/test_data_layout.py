"""Slots, monologue alignment, sample masks and counts, trigger labels of a built stream."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from egomem.memory.trigger.labels import END, START, session_labels
from egomem.memory.trigger.metrics import sessions as decode_sessions
from egomem.stream.clock import SAMPLES_PER_STEP, STEP_S
from egomem_training.data.audio import AugmentConfig
from egomem_training.data.layout import DIALOG_START, level2_text
from egomem_training.data.plan import STOP_AFTER, TEXT_LEAD
from egomem_training.data.stream import BuiltStream
from egomem_training.data.text_tokens import ANSWER, PAD, RETR


@pytest.fixture(scope="module")
def built(kit: Any) -> BuiltStream:
    return kit.stream()


def _active_steps(x: np.ndarray) -> np.ndarray:
    n = x.size // SAMPLES_PER_STEP
    return np.flatnonzero(np.abs(x[: n * SAMPLES_PER_STEP]).reshape(n, SAMPLES_PER_STEP).max(axis=1) > 1e-4)


def test_sample_counts_per_task(kit: Any, built: BuiltStream) -> None:
    tasks = [s.task for s in built.samples]
    n_sessions = len(kit.script.sessions)
    n_level2 = sum(t.level == 2 for s in kit.script.sessions for t in s.turns)
    assert tasks.count("level1") == n_sessions == 2
    assert tasks.count("level2_query") == tasks.count("level2_answer") == n_level2 == 3
    assert tasks.count("trigger") == 1


def test_monologue_starts_two_steps_before_each_reply(kit: Any, built: BuiltStream) -> None:
    pad, answer, retr = (kit.tok.id_of(x) for x in (PAD, ANSWER, RETR))
    speak_on = set(_active_steps(built.speak).tolist())
    assert TEXT_LEAD == 2
    for s in built.plan:
        for t in s.turns:
            # the reply's audio begins at reply_start (nothing on the speaking channel the step before)
            assert t.reply_start in speak_on and t.reply_start - 1 not in speak_on
            first_text = t.reply_start - 2
            assert built.text[first_text] == kit.tok.encode(kit.script.sessions[s.index].turns[t.turn].assistant)[0]
            before = built.text[first_text - 1]
            if t.level == 2:
                assert before == answer and built.text[t.query_start] == retr
                assert np.all(built.text[t.query_start : first_text] != pad)
            else:
                assert before == pad


def test_masks_cover_the_right_spans(kit: Any, built: BuiltStream) -> None:
    retr, answer = kit.tok.id_of(RETR), kit.tok.id_of(ANSWER)
    sessions = {s.session_id: s for s in built.plan}
    facts = {(s.id, k): t.facts for s in kit.script.sessions for k, t in enumerate(s.turns)}
    for smp in built.samples:
        for a, b in smp.text_spans + smp.speak_spans + smp.label_spans:
            assert DIALOG_START <= a < b <= DIALOG_START + built.text.size  # never in the MemChunk slots
        if smp.task == "level1":
            plan = sessions[smp.session_id]
            assert (
                smp.text_spans
                == smp.speak_spans
                == [(DIALOG_START + plan.start, DIALOG_START + int(plan.end_s / STEP_S) + 1)]
            )
            assert smp.level1_text.startswith("Current user: ") and smp.level2_text == ""
        elif smp.task == "level2_query":
            ((a, b),) = smp.text_spans
            assert built.text[a - DIALOG_START] == retr and built.text[b - 1 - DIALOG_START] == answer
            assert smp.speak_spans == []
            prev = [k for (sid, k) in facts if sid == smp.session_id and k < smp.turn and facts[(sid, k)]]
            assert smp.level2_text == (level2_text(facts[(smp.session_id, max(prev))]) if prev else "")
        elif smp.task == "level2_answer":
            t = sessions[smp.session_id].turns[smp.turn]
            assert smp.speak_spans == [(DIALOG_START + t.reply_start, DIALOG_START + t.reply_end)]
            assert smp.text_spans[0][0] == DIALOG_START + t.reply_start - 2
            assert smp.level2_text == level2_text(facts[(smp.session_id, smp.turn)])
        else:
            assert smp.label_spans == [(DIALOG_START, DIALOG_START + built.text.size)]


def test_trigger_labels_are_the_trigger_code_labels(built: BuiltStream) -> None:
    spans_s = [(p.start * STEP_S, p.end_s) for p in built.plan]
    labels, spans = session_labels(spans_s, built.text.size)
    assert np.array_equal(built.labels, labels)
    assert decode_sessions(built.labels) == spans == [tuple(x) for x in built.meta["trigger_sessions"]]
    # and they sit on the audio: a session starts at its user's first speech, ends at its last sound
    listen_on, speak_on = _active_steps(built.listen_clean), _active_steps(built.speak)
    for (a, b), plan in zip(spans, built.plan, strict=True):
        assert built.labels[a] == START and built.labels[b] == END
        assert a == listen_on[listen_on >= plan.start][0]
        last_sound = max(listen_on[listen_on <= b].max(), speak_on[speak_on <= b].max())
        assert abs(last_sound - b) <= 1


def test_interruption_cuts_the_reply_and_its_monologue(kit: Any) -> None:
    st = kit.stream(index=1, augment=AugmentConfig(interrupt_p=1.0, echo_p=0.0, background_p=0.0, noise_p=0.0))
    speak_on = set(_active_steps(st.speak).tolist())
    cut = [t for s in st.plan for t in s.turns if t.interrupted]
    assert cut, "with interrupt_p=1 every long enough reply with a next turn is cut"
    for s in st.plan:
        for t, nxt in zip(s.turns, s.turns[1:], strict=False):
            if not t.interrupted:
                continue
            assert t.reply_start < nxt.user_start < t.reply_end == nxt.user_start + STOP_AFTER
            assert not speak_on & set(range(t.reply_end, nxt.reply_start))  # silent after the cut
            assert t.text_end <= t.reply_end
    assert st.meta["augmentation"]["echo"] is False and np.array_equal(st.listen, st.listen_clean)


def test_echo_is_the_delayed_speaking_channel(kit: Any) -> None:
    st = kit.stream(index=2, augment=AugmentConfig(echo_p=1.0, background_p=0.0, noise_p=0.0))
    aug = st.meta["augmentation"]
    d = int(aug["echo_delay_s"] * 16000)
    expected = st.listen_clean.copy()
    expected[d:] += aug["echo_gain"] * st.speak[: expected.size - d]
    assert np.allclose(st.listen, expected, atol=1e-6)
    assert 0.0 <= aug["echo_gain"] <= 0.2 and 0.1 <= aug["echo_delay_s"] <= 0.5


def test_no_voice_shared_by_two_users_nor_the_assistant(kit: Any) -> None:
    for index in range(6):
        st = kit.stream(index=index, augment=AugmentConfig(background_p=1.0, noise_p=0.0))
        voices = list(st.meta["voices"].values())
        assert len(voices) == len(set(voices)) == 2
        assert st.meta["background"]["voice"] not in voices
        assert st.meta["assistant_voice"] == "espeak-ng" and all(v != "espeak-ng:en-us" for v in voices)


def test_truncation_drops_what_does_not_fit(kit: Any) -> None:
    st = kit.stream(max_steps=DIALOG_START + 200)
    assert st.text.size == st.labels.size == st.listen_codes.shape[0] == 200
    for smp in st.samples:
        for _a, b in smp.text_spans + smp.speak_spans:
            assert b <= DIALOG_START + 200
    assert st.meta["sessions_left_out"], "the second session cannot start inside 200 steps"


def test_the_trigger_streams_label_with_the_same_function(monkeypatch: pytest.MonkeyPatch) -> None:
    """synth.make_stream (the trigger's training streams) labels through labels.session_labels,
    the function the builder calls: one labelling rule for both."""
    from egomem.memory.trigger import labels as labels_mod
    from egomem.perception.vad import Segment
    from egomem_eval.trigger import synth

    calls: list[np.ndarray] = []

    def spy(spans_s: list[tuple[float, float]], steps: int) -> tuple[np.ndarray, list[tuple[int, int]]]:
        out = labels_mod.session_labels(spans_s, steps)
        calls.append(out[0])
        return out

    monkeypatch.setattr(synth, "session_labels", spy)
    rng = np.random.default_rng(0)
    burst = (0.05 * rng.standard_normal(3 * 16000)).astype(np.float32)
    utt = synth.Utterance(burst, [Segment(0.0, 3.0)])
    pools = synth.SpeechPools(users={"a": [utt], "b": [utt]}, assistant=[utt], background=[burst])
    stream = synth.make_stream(np.random.default_rng(1), pools)
    assert len(calls) == 1 and calls[0] is stream.labels
    assert decode_sessions(stream.labels) == stream.sessions
