"""Wiring: the real components an EgoMem agent runs with, from the configuration.

Heavy models (face and voice encoders, the text encoder, the trigger network, ASR, TTS)
are loaded once in `Models` and shared by every agent built from it (the demo runs
one agent per day over the same models and store).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from egomem.config import Config
from egomem.dialog.base import DuplexModel
from egomem.dialog.speech import Synthesizer
from egomem.llm.base import LLMProvider
from egomem.memory.manager import MemoryManager
from egomem.memory.rules_provider import RulesProvider
from egomem.memory.trigger.metrics import sessions
from egomem.memory.updater import Encoder
from egomem.perception.asr import Transcriber
from egomem.perception.vad import SileroVAD
from egomem.privacy.consent import resolve_policy
from egomem.providers import BuildContext, create
from egomem.retrieval.encoder import TextEncoder, default_encoder
from egomem.retrieval.process import RetrievalProcess
from egomem.runtime.agent import Components, EgoMem, Trigger
from egomem.runtime.privacy_turns import PrivacyTurns
from egomem.runtime.timeline import Timeline
from egomem.store.base import MemoryStore


@dataclass
class Models:
    config: Config

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


def build_dialog(config: Config) -> DuplexModel:
    model: DuplexModel = create("dialog", config.dialog, BuildContext(config.data_dir))
    return model


def memory_manager(config: Config, store: MemoryStore, llm: LLMProvider, encoder: Encoder) -> MemoryManager:
    """The memory manager the agent runs: `llm` extracts, `[memory] update_agent` plans updates."""
    # A model's answer that fails validation is not retried forever: the rules answer that
    # session instead, and the episode records why (status done:fallback(<reason>)).
    fallback = None if isinstance(llm, RulesProvider) else RulesProvider()
    update = RulesProvider() if config.memory.update_agent == "rules" else None
    return MemoryManager(store, llm, encoder, config.memory, fallback=fallback, update_provider=update)


def build_agent(
    config: Config,
    store: MemoryStore,
    models: Models,
    timeline: Timeline | None = None,
    *,
    model: DuplexModel | None = None,
    command: str = "run",
) -> EgoMem:
    """`command` picks the consent policy when `[privacy] consent` is unset (egomem.privacy.consent)."""
    from egomem.identity.attribution import TurnAttributor
    from egomem.identity.consent_gate import ConsentGate
    from egomem.identity.identifier import PersonIdentifier

    identifier = PersonIdentifier(
        store, config, face_encoder=models.face, voice_encoder=models.voice, cohort=models.voice_cohort
    )
    # privacy hook: new people are enrolled through the consent gate (at once unless the policy is `ask`).
    gate = ConsentGate(identifier, resolve_policy(config.privacy.consent, command))
    retrieval = RetrievalProcess(store, identifier, enroller=gate, config=config.retrieval, encoder=models.text)
    # Whisper spells the names memory already holds as remembered (measured: 24 of 36
    # synthetic clips with unusual names right instead of 4, LibriSpeech WER unchanged).
    set_hotwords = getattr(models.transcriber, "set_hotwords", None)
    if callable(set_hotwords):
        set_hotwords(sorted({u.name for u in store.list_users() if u.name}))
    manager = memory_manager(config, store, create("llm", config.llm, models.context), models.text)
    margin = config.runtime.turn_voice_margin
    attributor = None if margin is None else TurnAttributor(identifier, margin=margin)
    parts = Components(
        store=store,
        retrieval=retrieval,
        model=model or build_dialog(config),
        transcriber=models.transcriber,
        trigger=models.trigger,
        sessions=sessions,
        manager=manager,
        vad=models.vad,
        learn=identifier.learn,
        voice=models.speech,
        attribute=None if attributor is None else attributor.attribute,
        attribute_voices=None if attributor is None else attributor.attribute_voices,
        split_turn=turn_splitter(config, models),
        privacy=PrivacyTurns(store, gate, identifier, clock=lambda: retrieval.clock()),  # privacy hook
    )
    return EgoMem(config, parts, timeline)


def turn_splitter(config: Config, models: Models) -> Callable[[np.ndarray], list[tuple[float, float, int]]] | None:
    """Cuts a finished user turn at speaker changes, each piece labelled with its voice within the turn,
    with the product's voice encoder (None: off)."""
    threshold = config.runtime.turn_split_threshold
    if threshold is None:
        return None
    from egomem.perception.diarization import Diarizer, TurnSplitter

    splitter = TurnSplitter(Diarizer(models.voice), threshold=threshold, min_piece_s=config.runtime.turn_split_min_s)
    return splitter.split_labelled
