"""The heavy models an agent runs with, loaded once and shared.

Face and voice encoders, the text encoder, the trigger network, ASR and TTS are loaded once
in `Models` and shared by every agent built from it (the demo runs one agent per day over the
same models and store; the server, every device session).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from egomem.config import Config
from egomem.dialog.speech import Synthesizer
from egomem.perception.asr import Transcriber
from egomem.perception.vad import SileroVAD
from egomem.providers import BuildContext, create
from egomem.retrieval.encoder import TextEncoder, default_encoder
from egomem.runtime.heap import cap_malloc_arenas
from egomem.runtime.memory_rounds import Trigger


@dataclass
class Models:
    config: Config

    def __post_init__(self) -> None:
        # Before the models start their thread pools and the agent its threads (runtime/heap.py).
        cap_malloc_arenas()

    @cached_property
    def vad(self) -> SileroVAD:
        return SileroVAD()

    @cached_property
    def text(self) -> TextEncoder:
        return default_encoder()

    @cached_property
    def context(self) -> BuildContext:
        return BuildContext(self.config.data_dir)

    @cached_property
    def transcriber(self) -> Transcriber:
        asr: Transcriber = create("asr", self.config.asr, self.context)
        return asr

    @cached_property
    def trigger(self) -> Trigger:
        trigger: Trigger = create("trigger", self.config.trigger, self.context)
        return trigger

    @cached_property
    def speech(self) -> Synthesizer:
        """The assistant's voice on the speaking channel (Piper; espeak-ng when Piper is missing)."""
        synth: Synthesizer = create("tts", self.config.tts, self.context)
        return synth

    @cached_property
    def face(self) -> Any:
        from egomem.perception.face import FaceEncoder

        return FaceEncoder(self.config.face)

    @cached_property
    def voice(self) -> Any:
        from egomem.perception.voice import VoiceEncoder

        return VoiceEncoder(self.config.voice)

    @cached_property
    def voice_cohort(self) -> Any:
        """The s-norm impostor cohort (read-only): read once, not per session."""
        from egomem.identity.cohort import load_cohort

        return load_cohort()

    def load_all(self, report: Callable[[str, float], None] | None = None) -> Models:
        """Load every model now rather than on first use. A server does this before it
        accepts devices: loading in a device's first session held the GIL long enough, on a
        busy machine, for the event loop to miss the client's keepalive pings (> 20 s) and
        drop the connection. `report(what, seconds)` is told each one as it is loaded
        (`egomem run` prints it: these are the long silent phases otherwise)."""
        loads: list[tuple[str, Callable[[], object]]] = [
            ("voice activity detector", lambda: self.vad),
            ("text encoder", lambda: self.text),
            (f"speech recognition ({self.config.asr.provider})", lambda: self.transcriber),
            (f"the assistant's voice ({self.config.tts.provider})", lambda: self.speech),
            ("voice cohort", lambda: self.voice_cohort),
            ("face encoder", lambda: self.face.load()),
            ("voice encoder", lambda: self.voice.load()),
            # the model trigger builds its features' models lazily
            (f"episodic trigger ({self.config.trigger.provider})", lambda: getattr(self.trigger, "extractor", None)),
        ]
        for what, load in loads:
            t0 = time.perf_counter()
            load()
            if report is not None:
                report(what, time.perf_counter() - t0)
        return self
