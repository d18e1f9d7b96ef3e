"""People who follow each other with no pause share one VAD turn: the agent cuts it at the speaker
changes before ASR and attribution (runtime.turn_split_threshold, perception.diarization.TurnSplitter).

Real recording: pyAudioAnalysis' diarization example 2 (a dev recording of `bench real`): six people
each saying a command, one after another with no pause, so the turn detector hears one 22 s turn.
Its truth (`.segments`) says who speaks when. The transcriber is a plumbing mock (every piece "words"):
what is tested is where the agent cuts the turns it transcribes and attributes.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import numpy as np

from egomem.config import load_config
from egomem.runtime.agent import RunResult
from egomem.runtime.build import Models, Services, build_agent
from egomem.runtime.timeline import Timeline
from egomem.store.sqlite import SQLiteStore
from egomem.stream.sources import read_recording, replay


class WordsTranscriber:
    """Plumbing mock: "words" for any audio (the test looks at the turns' times, not their text)."""

    def transcribe(self, audio: np.ndarray) -> str:
        return "words"


def _truth(path: Path) -> list[tuple[float, float, str]]:
    rows = [line.split() for line in path.read_text().splitlines() if line.strip()]
    return [(float(s), float(e), who) for s, e, who in rows]


def _speech_of(turn: tuple[float, float], truth: list[tuple[float, float, str]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for s, e, who in truth:
        o = min(turn[1], e) - max(turn[0], s)
        if o > 0:
            out[who] = out.get(who, 0.0) + o
    return out


def _run_voice_commands(
    tmp_path: Path, shared_data: Callable[[str], Path]
) -> tuple[list[tuple[float, float, str]], RunResult]:
    """The recording's truth and the agent's run over it (rules extractor, the mock transcriber)."""
    folder = shared_data("pyaudioanalysis_diarization")
    cfg = load_config(data_dir=tmp_path, environ={"EGOMEM_LLM__PROVIDER": "rules"})
    models = Models(cfg)
    models.__dict__["transcriber"] = WordsTranscriber()
    agent = build_agent(Services(cfg, SQLiteStore(tmp_path / "memory.db"), models), Timeline())
    result = agent.run(replay(read_recording(folder / "diarizationExample2.wav")), lockstep=True)
    return _truth(folder / "diarizationExample2.segments"), result


def test_a_turn_of_several_people_is_cut_at_their_changes(tmp_path: Path, shared_data: Callable[[str], Path]) -> None:
    truth, result = _run_voice_commands(tmp_path, shared_data)

    turns = [(s, e) for s, e, _, _ in sorted(result.heard)]
    changes = [e for (_, e, _), (s, _, _) in itertools.pairwise(truth) if abs(e - s) < 0.05]
    assert len(changes) == 5  # the truth: six people, no pause between them
    cuts = [s for s, _ in turns[1:]]
    found = [c for c in changes if any(abs(c - x) <= 0.75 for x in cuts)]
    # Without the splitter the whole recording is one turn: no change is cut (0 of 5).
    assert len(found) >= 4, (turns, changes)
    for turn in turns:  # no piece holds more than two people's speech (1 s or more each)
        assert sum(v >= 1.0 for v in _speech_of(turn, truth).values()) <= 2, (turn, turns)


def test_voices_told_apart_in_a_turn_are_not_all_given_to_one_person(
    tmp_path: Path, shared_data: Callable[[str], Path]
) -> None:
    """Same recording: in one room every voice scores far above the threshold against the person
    enrolled first, so before `attribute_voices` all six people's pieces went to that one person (a
    merge writing five people's words onto them). Now the current user keeps at most one voice of
    a split turn; the others are an unknown speaker's (kept out of that person's memory)."""
    truth, result = _run_voice_commands(tmp_path, shared_data)

    owners: dict[str | None, set[str]] = {}  # who memory gave each piece to -> true people in those pieces
    for s, e, _, who in result.heard:
        speech = _speech_of((s, e), truth)
        if speech:
            owners.setdefault(who, set()).add(max(speech, key=lambda k: speech[k]))
    remembered = {who: people for who, people in owners.items() if who != "?unknown-voice"}
    assert remembered, owners  # someone's words are still remembered
    # No person in memory holds more than two true people (the piece boundaries are ±0.75 s).
    assert all(len(people) <= 2 for people in remembered.values()), owners
