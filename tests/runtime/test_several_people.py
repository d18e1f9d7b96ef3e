"""Two enrolled people in one session, both on camera, taking turns: each one's facts are theirs,
and a stranger's words, heard beside them, are remembered on no one.

Real voices (two LibriSpeech test-other speakers) and real faces (two LFW people, side by
side in every frame). LibriSpeech does not say the facts we need, so the transcriber is a
stand-in that returns the scripted lines in order (a plumbing mock: ScriptedTranscriber).
Who said each line is decided by the product from the real audio alone.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from egomem.config import load_config
from egomem.media import load_audio
from egomem.perception.audio import SAMPLE_RATE
from egomem.runtime.build import Models, Services, build_agent
from egomem.runtime.timeline import Timeline
from egomem.store.sqlite import SQLiteStore
from egomem.stream.buffer import Frame
from egomem.stream.sources import Recording, replay

# LibriSpeech test-other speaker ids: the two people, and a stranger nobody enrolled.
SPEAKERS = ("1688", "2033", "3080")
FACES = ("Colin_Powell", "Ariel_Sharon")
SCRIPT = [  # (speaker index, what the transcriber returns for that turn)
    (0, "I work as a nurse at the city hospital."),
    (1, "I play the guitar every weekend."),
    (0, "This is my husband Ben."),
    (1, "I live in Porto."),
    (2, "My name is Tom and I live in Paris."),  # the stranger: heard, remembered on no one
    (0, "I love hiking in the mountains."),
    (1, "I hate coffee."),
]


class ScriptedTranscriber:
    """Plumbing mock: the scripted lines in order, whatever the audio says."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = list(lines)

    def transcribe(self, audio: np.ndarray) -> str:
        return self.lines.pop(0) if self.lines else ""


def _utterances(folder: Path) -> list[np.ndarray]:
    """The speaker's utterances of 3-7 s (enough speech for a confident voice match)."""
    out = [load_audio(p) for p in sorted(folder.glob("*.flac"))]
    return [a for a in out if 3.0 <= a.size / SAMPLE_RATE <= 7.0]


def _frame(photos: list[Path]) -> np.ndarray:
    canvas = Image.new("RGB", (640, 480), (96, 96, 96))
    for i, p in enumerate(photos):
        canvas.paste(Image.open(p).convert("RGB"), (40 + i * 310, 115))
    return np.asarray(canvas)


@pytest.mark.slow
def test_two_people_taking_turns_get_their_own_facts(tmp_path: Path, shared_data: Callable[[str], Path]) -> None:
    speech = shared_data("speech_librispeech_test_other_10spk")
    faces = shared_data("faces_lfw_subset_10x10") / "images"
    photos = [sorted((faces / f).glob("*.jpg"))[0] for f in FACES]
    voices = [_utterances(speech / s) for s in SPEAKERS]
    assert all(len(v) >= 5 for v in voices[:2]) and len(voices[2]) >= 3

    cfg = load_config(data_dir=tmp_path, environ={"EGOMEM_LLM__PROVIDER": "rules"})
    store = SQLiteStore(tmp_path / "memory.db")
    models = Models(cfg)
    models.__dict__["transcriber"] = ScriptedTranscriber([line for _, line in SCRIPT])
    agent = build_agent(Services(cfg, store, models), Timeline())
    identifier = agent.identity.retrieval.identifier
    # Both met before, alone (enrolled from their own face and two other utterances each).
    ids = []
    for name, photo, v in zip(("Anna", "Ben"), photos, voices[:2], strict=True):
        face = models.face.observe(np.asarray(Image.open(photo).convert("RGB")))
        voice = models.voice.observe(np.concatenate(v[:2]))
        ids.append(identifier.enroll(None, face, voice, name=name, condition="met alone"))

    gap = np.zeros(int(2.5 * SAMPLE_RATE), np.float32)
    parts, next_utt = [gap], [2, 2, 2]
    for who, _ in SCRIPT:
        parts += [voices[who][next_utt[who]], gap]
        next_utt[who] += 1
    listen = np.concatenate([*parts, np.zeros(12 * SAMPLE_RATE, np.float32)])
    duration = listen.size / SAMPLE_RATE
    image = _frame(photos)
    frames = [Frame(t / 2, image) for t in range(int(duration * 2))]
    rec = Recording(listen=listen, speak=np.zeros_like(listen), frames=frames, duration_s=duration)
    agent.run(replay(rec), lockstep=True)

    def current(uid: str) -> set[str]:
        return {f.text for f in store.list_facts(uid)}

    heard = [(e.fields.get("user"), e.fields.get("text"), e.fields.get("how")) for e in agent.timeline.of_type("heard")]
    assert [u for u, _, _ in heard] == [ids[who] if who < 2 else None for who, _ in SCRIPT], (ids, heard)
    every_fact = [f.text for u in store.list_users() for f in store.list_facts(u.id)]
    assert not any("Paris" in f for f in every_fact), every_fact
    anna, ben = current(ids[0]), current(ids[1])
    assert any("nurse" in f for f in anna) and any("hiking" in f for f in anna), anna
    assert any("guitar" in f for f in ben) and any("Porto" in f for f in ben) and any("coffee" in f for f in ben), ben
    assert not any(w in f for f in anna for w in ("guitar", "Porto", "coffee")), anna
    assert not any(w in f for f in ben for w in ("nurse", "hiking")), ben
    # "This is my husband Ben", said by Anna: Anna's husband is the real Ben, not a new placeholder.
    husband = [r for r in store.list_relations(ids[0]) if r.relation == "husband"]
    assert [r.object_id for r in husband] == [ids[1]], store.list_relations(ids[0])
    assert [u.name for u in store.list_users()] == ["Anna", "Ben"]
    # Level 1 holds the current user's profile and names the other person heard beside them.
    level1 = [e.fields["text"] for e in agent.timeline.of_type("memchunk") if e.fields["level"] == 1]
    assert any("\nAlso here: Anna" in t or "\nAlso here: Ben" in t for t in level1), level1
    store.close()
