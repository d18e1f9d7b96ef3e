"""Wiring: an EgoMem agent for one stream, from the `Services` (the composition root).

The stream (buffer and clock) is made first, so that retrieval receives its window and clock
when it is built; each part then gets its own config section.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from egomem.config import Config
from egomem.dialog.base import DuplexModel
from egomem.memory.trigger.metrics import sessions
from egomem.privacy.consent import resolve_policy
from egomem.providers import BuildContext, create
from egomem.retrieval.process import RetrievalProcess
from egomem.runtime.agent import Components, EgoMem
from egomem.runtime.dialog_loop import Voices
from egomem.runtime.models import Models
from egomem.runtime.privacy_turns import PrivacyTurns
from egomem.runtime.services import Services, memory_manager
from egomem.runtime.timeline import Timeline
from egomem.runtime.window import AgentStream

__all__ = ["Models", "Services", "build_agent", "build_dialog", "memory_manager", "turn_splitter"]


def build_dialog(config: Config) -> DuplexModel:
    model: DuplexModel = create("dialog", config.dialog, BuildContext(config.data_dir))
    return model


def build_agent(
    services: Services,
    timeline: Timeline | None = None,
    *,
    model: DuplexModel | None = None,
    wall_origin: float | None = None,
    command: str = "run",
    refine_here: bool = True,
) -> EgoMem:
    """An agent for one stream. `wall_origin`: the wall-clock time of the stream's start (now
    when None; a recording's own time when memorising it). `command` picks the consent policy
    when `[privacy] consent` is unset (egomem.privacy.consent). `refine_here=False`: the model's
    passes after the rules' writes are left to a worker that outlives the agent (the server's)."""
    from egomem.identity.attribution import TurnAttributor
    from egomem.identity.consent_gate import ConsentGate
    from egomem.identity.identifier import MAX_FRAMES

    config, models, store = services.config, services.models, services.store
    stream = AgentStream(config.runtime.buffer_s, wall_origin)
    identifier = services.identifier()
    # privacy hook: new people are enrolled through the consent gate (at once unless the policy is `ask`).
    gate = ConsentGate(identifier, resolve_policy(config.privacy.consent, command))
    window = stream.window(max_age_s=config.retrieval.poll_interval_s * 1.5)  # what each poll sees
    retrieval = RetrievalProcess(
        store,
        identifier,
        window,
        enroller=gate,
        config=config.retrieval,
        encoder=models.text,
        clock=stream.clock,
    )
    # Whisper spells the names memory already holds as remembered (measured: 24 of 36
    # synthetic clips with unusual names right instead of 4, LibriSpeech WER unchanged).
    set_hotwords = getattr(models.transcriber, "set_hotwords", None)
    if callable(set_hotwords):
        set_hotwords(sorted({u.name for u in store.list_users() if u.name}))
    margin = config.runtime.turn_voice_margin
    attributor = (  # who is in view when a turn's voice says someone else: the frames a poll would see
        None
        if margin is None
        else TurnAttributor(identifier, margin=margin, frames=lambda: window.latest_frames(MAX_FRAMES))
    )
    parts = Components(
        store=store,
        retrieval=retrieval,
        model=model or build_dialog(config),
        transcriber=models.transcriber,
        trigger=models.trigger,
        sessions=sessions,
        manager=services.manager,
        vad=models.vad,
        learn=identifier.learn,
        voice=models.speech,
        voices=Voices(
            attribute=None if attributor is None else attributor.attribute,
            split_turn=turn_splitter(config, models),
            attribute_voices=None if attributor is None else attributor.attribute_voices,
        ),
        privacy=PrivacyTurns(store, gate, identifier, clock=stream.clock),  # privacy hook
        refine_here=refine_here,
    )
    return EgoMem(config, parts, timeline, stream)


def turn_splitter(config: Config, models: Models) -> Callable[[np.ndarray], list[tuple[float, float, int]]] | None:
    """Cuts a finished user turn at speaker changes, each piece labelled with its voice within the turn,
    with the product's voice encoder (None: off)."""
    threshold = config.runtime.turn_split_threshold
    if threshold is None:
        return None
    from egomem.perception.diarization import Diarizer, TurnSplitter

    splitter = TurnSplitter(Diarizer(models.voice), threshold=threshold, min_piece_s=config.runtime.turn_split_min_s)
    return splitter.split_labelled
