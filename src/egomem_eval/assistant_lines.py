"""The assistant's voice for the trigger's streams: what the runtime puts on the speaking channel.

The default dialog model (the template responder) is driven with Level-1/Level-2 memory
chunks and user turns, as the agent drives it; each line it says (the `<retr>` query
stripped, as `runtime.agent` strips it) is synthesised by the product's TTS provider (the
`[tts]` default: Piper `joe`, espeak-ng where Piper cannot run) at the level it outputs.
Training and evaluation use different names and facts (the phrasing is the product's).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from egomem.config import load_config
from egomem.dialog.base import UserTurn
from egomem.dialog.template import TemplateResponder
from egomem.retrieval.query_parser import split_monologue
from egomem.runtime.build import Models
from egomem.schemas import MemChunk
from egomem_eval.trigger.synth import AssistantVoice, Split

# (name, a profile fact, a relation, that person's name, a fact about them, a word in it)
_PEOPLE: dict[Split, list[tuple[str, str, str, str, str, str]]] = {
    "eval": [
        ("Maya", "works as a nurse", "sister", "Lena", "likes jazz and old films", "jazz"),
        ("Oliver", "plays the cello", "brother", "Sam", "works at the bakery on Main Street", "bakery"),
        ("Priya", "likes spicy food", "friend", "Tom", "is moving to Berlin next month", "berlin"),
        ("Lucas", "runs every morning", "mother", "Grace", "grows tomatoes in her garden", "tomatoes"),
    ],
    "train": [
        ("Nora", "teaches chemistry", "cousin", "Ben", "builds model trains", "trains"),
        ("Diego", "has two cats", "father", "Carlos", "fixes old radios", "radios"),
        ("Hana", "studies law", "neighbor", "Ruth", "walks her dog at six", "dog"),
        ("Felix", "drives a taxi", "daughter", "Ivy", "sings in a choir", "choir"),
    ],
}


def _spoken(tokens: Iterable[str]) -> str:
    return " ".join(split_monologue("".join(tokens))[1].split())


def responder_lines(split: Split) -> tuple[list[str], list[str]]:
    """(replies, greetings) the template responder says in scripted sessions of `split`."""
    replies: list[str] = []
    greetings: list[str] = []
    for i, (name, fact, rel, other, other_fact, word) in enumerate(_PEOPLE[split]):
        r = TemplateResponder()
        for text in (f"Current user: {name}\n- {fact}", f"Current user: {name}", "Current user: name not known yet"):
            r.on_memchunk(MemChunk(level=1, text=text, user_id=f"{split}-{i}-{len(greetings)}"))
            greetings.append(_spoken(r.proactive(0.0)))
        r.on_memchunk(MemChunk(level=1, text="Current user: name not known yet", user_id=f"{split}-{i}-new"))
        r.on_memchunk(MemChunk(level=2, text=f"- {other}, {rel}: {other_fact}"))
        for said in (
            f"My name is {name}.",
            f"I {fact.split(' ', 1)[0].rstrip('s')} {fact.split(' ', 1)[1]} these days.",
            "What time is it?",
            f"Does my {rel} still go on about {word}?",
            "Do my neighbours know about the party?",
            "It was a long week.",
        ):
            line = _spoken(r.on_user_turn(UserTurn(said, 0.0, 1.0)))
            if line:
                replies.append(line)
    return replies, [g for g in greetings if g]


def assistant_voice(split: Split, data_dir: Path, quick: bool = False, cache: Path | None = None) -> AssistantVoice:
    """The lines of `split` in the product's voice (quick: 3 replies and 1 greeting).

    With `cache`, the audio is kept there, keyed by the lines and the synthesizer."""
    replies, greetings = responder_lines(split)
    if quick:
        replies, greetings = replies[:3], greetings[:1]
    synth = Models(load_config(data_dir=data_dir)).speech  # the agent's own voice
    key = hashlib.sha256("\n".join([synth.name, *replies, "--", *greetings]).encode()).hexdigest()[:16]
    path = cache / f"voice_{split}_{synth.name}_{key}.npz" if cache is not None else None
    if path is not None and path.is_file():
        with np.load(path) as z:
            return AssistantVoice(
                synth.name,
                [z[f"r{i}"] for i in range(len(replies))],
                [z[f"g{i}"] for i in range(len(greetings))],
            )
    voice = AssistantVoice(
        synth.name,
        [synth.synthesize(t).copy() for t in replies],
        [synth.synthesize(t).copy() for t in greetings],
    )
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        arrays = {f"r{i}": a for i, a in enumerate(voice.replies)} | {f"g{i}": a for i, a in enumerate(voice.greetings)}
        np.savez(path, **arrays)  # type: ignore[arg-type]
    return voice
