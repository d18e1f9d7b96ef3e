"""A tiny script built once per module with espeak-ng voices (fast), kept in memory."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from egomem_training.data.audio import AugmentConfig, LineCache, assistant_synthesizer, user_voice_pool
from egomem_training.data.audio_tokens import LogMelFrameTokenizer
from egomem_training.data.build import BuildConfig
from egomem_training.data.script import Script, load_script
from egomem_training.data.stream import BuiltStream, build_stream
from egomem_training.data.text_tokens import WordTokenizer

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "data" / "example_script.json"
FAST = BuildConfig(assistant_voice="espeak-ng", user_engines=("espeak-ng",), sessions_per_stream=2, picture=False)


@dataclass
class Kit:
    script: Script
    lines: LineCache
    tok: WordTokenizer
    audio: LogMelFrameTokenizer

    def stream(
        self, index: int = 0, seed: int = 0, augment: AugmentConfig | None = None, max_steps: int = 8192
    ) -> BuiltStream:
        return build_stream(
            index,
            seed,
            self.script.sessions,
            self.script,
            pool=user_voice_pool(("espeak-ng",)),
            lines=self.lines,
            text_tok=self.tok,
            audio_tok=self.audio,
            augment_cfg=augment or AugmentConfig(),
            max_steps=max_steps,
        )


@pytest.fixture(scope="session")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kit]:
    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed (apt-get install espeak-ng)")
    script = load_script(EXAMPLE)
    texts = [x for s in script.sessions for t in s.turns for x in (t.user, t.assistant, *t.facts)]
    tmp = tmp_path_factory.mktemp("tts")
    yield Kit(
        script,
        LineCache(tmp, assistant_synthesizer("espeak-ng")),
        WordTokenizer.from_texts([*texts, ":"]),
        LogMelFrameTokenizer(),
    )
