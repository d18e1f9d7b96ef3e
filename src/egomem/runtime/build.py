"""Wiring: the real components an EgoMem agent runs with, from the configuration.

Heavy models (face and voice encoders, the text encoder, the trigger network, ASR)
are loaded once in `Models` and shared by every agent built from it (the demo runs
one agent per day over the same models and store).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from egomem.config import Config
from egomem.dialog.base import DuplexModel
from egomem.dialog.template import TemplateResponder
from egomem.errors import ConfigError
from egomem.identity.types import Identification
from egomem.llm import create_provider
from egomem.memory.manager import MemoryManager
from egomem.memory.trigger.metrics import sessions
from egomem.perception.asr import Transcriber
from egomem.perception.vad import SileroVAD
from egomem.retrieval.encoder import TextEncoder, default_encoder
from egomem.retrieval.process import RetrievalProcess
from egomem.runtime.agent import Components, EgoMem, Trigger
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
    def transcriber(self) -> Transcriber:
        from egomem.perception.asr import make_asr

        return make_asr(self.config.runtime.asr, self.config.runtime.asr_model_dir)

    @cached_property
    def trigger(self) -> Trigger:
        if self.config.runtime.trigger == "rules":
            from egomem.memory.trigger.rules import RuleTrigger

            return _FeatureTagger(RuleTrigger.calibrated())
        from egomem.memory.trigger.tagger import EpisodicTrigger

        return EpisodicTrigger()

    @cached_property
    def face(self) -> Any:
        from egomem.perception.face import FaceEncoder

        return FaceEncoder(self.config.face)

    @cached_property
    def voice(self) -> Any:
        from egomem.perception.voice import VoiceEncoder

        return VoiceEncoder(self.config.voice)


class _Enroller:
    """A person seen/heard steadily but matched by nobody becomes a provisional user with
    the keys of that observation (the memory process names them later)."""

    def __init__(self, identifier: Any) -> None:
        self.identifier = identifier

    def enroll_new(self, identification: Identification) -> str:
        uid: str = self.identifier.enroll(None, identification.face, identification.voice, condition="first meeting")
        return uid


class _FeatureTagger:
    """Gives a feature-level tagger (the rule baseline) the agent's `tag(listen, speak)`."""

    def __init__(self, tagger: Any) -> None:
        from egomem.memory.trigger.features import FeatureExtractor

        self.tagger = tagger
        self.features = FeatureExtractor.default()

    def tag(self, listen16k: Any, speak16k: Any) -> Any:
        return self.tagger.tag_features(self.features(listen16k, speak16k))


def build_dialog(config: Config) -> DuplexModel:
    if config.runtime.dialog == "template":
        return TemplateResponder()
    if config.runtime.dialog == "openai":
        from egomem.dialog.cascaded import CascadedChatModel

        return CascadedChatModel.from_config(config.llm)
    raise ConfigError(f"unknown dialog model {config.runtime.dialog!r}")


def build_agent(
    config: Config,
    store: MemoryStore,
    models: Models,
    timeline: Timeline | None = None,
    *,
    model: DuplexModel | None = None,
) -> EgoMem:
    from egomem.identity.identifier import PersonIdentifier

    identifier = PersonIdentifier(store, config, face_encoder=models.face, voice_encoder=models.voice)
    retrieval = RetrievalProcess(
        store, identifier, enroller=_Enroller(identifier), config=config.retrieval, encoder=models.text
    )
    manager = MemoryManager(store, create_provider(config.llm), models.text, config.memory)
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
    )
    return EgoMem(config, parts, timeline)
