"""The assistant's voice: real speech on the speaking channel, cached, and a clear error when missing."""

from __future__ import annotations

import shutil
import subprocess
import sys

import numpy as np
import pytest

from egomem.dialog.speech import (
    EspeakSynthesizer,
    PiperConfig,
    PiperSynthesizer,
    ToneSynthesizer,
    packaged_piper_voice,
)
from egomem.errors import ConfigError
from egomem.media import SAMPLE_RATE
from egomem.perception.vad import SileroVAD
from egomem.providers import TTS


def _speech_seconds(audio: np.ndarray) -> float:
    vad = SileroVAD()
    return float(sum(seg.duration for seg in vad.segments(audio)))


def test_tone_is_an_envelope_not_speech() -> None:
    audio = ToneSynthesizer().synthesize("five words take two seconds")
    assert audio.dtype == np.float32
    assert abs(audio.size / SAMPLE_RATE - 2.0) < 0.01
    assert ToneSynthesizer().synthesize("   ").size == 0


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="Debian's espeak-ng is not installed")
def test_espeak_speaks_and_vad_hears_speech() -> None:
    synth = EspeakSynthesizer()
    audio = synth.synthesize("Hello Emily, good to see you again.")
    assert audio.dtype == np.float32 and 1.0 < audio.size / SAMPLE_RATE < 5.0
    assert float(np.max(np.abs(audio))) <= 1.0
    assert _speech_seconds(audio) > 0.8
    assert synth.synthesize("Hello   Emily, good to see you again.") is audio  # cached per normalised text


def test_piper_voice_is_found_in_its_package_or_named_clearly(tmp_path: object) -> None:
    if TTS.info("piper").installed:
        path = packaged_piper_voice("joe")
        assert path.suffix == ".onnx" and path.with_suffix(".onnx.json").is_file()
        audio = PiperSynthesizer(PiperConfig()).synthesize("Yes, your colleague John loves tennis.")
        assert 1.0 < audio.size / SAMPLE_RATE < 6.0
        assert _speech_seconds(audio) > 1.0
    with pytest.raises(ConfigError, match="not a packaged voice"):
        packaged_piper_voice("/nonexistent/voice.onnx")


def test_registry_lists_every_voice_without_importing_it() -> None:
    assert set(TTS.names()) == {"piper", "espeak-ng", "tone"}
    assert TTS.info("tone").installed


_PIPER_LINES = """
import hashlib, sys
import numpy as np
from egomem.dialog.speech import PiperConfig, PiperSynthesizer
synth = PiperSynthesizer(PiperConfig(variation=sys.argv[1] == "on"))
lines = ["Hello! What's your name?", "I see. Tell me more."]
order = lines if sys.argv[2] == "forward" else lines[::-1]
audio = {line: synth.synthesize(line) for line in order}
print(hashlib.sha1(np.asarray(audio[lines[1]], np.float32).tobytes()).hexdigest())
"""


def _piper_in_a_new_process(variation: str, order: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", _PIPER_LINES, variation, order], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_piper_says_a_line_the_same_whatever_was_said_before() -> None:
    # A replayed or resumed recording must get the same speaking channel (and so the same
    # sessions): a line's audio may depend on its text only, not on the process or on the
    # lines synthesised before it. With Piper's random variation on, it does depend on them.
    pytest.importorskip("piper")
    first = _piper_in_a_new_process("off", "forward")
    assert _piper_in_a_new_process("off", "backward") == first
    assert _piper_in_a_new_process("on", "forward") != _piper_in_a_new_process("on", "backward")


_PIPER_MEMORY = """
from egomem.dialog.speech import PiperConfig, PiperSynthesizer
def anon():
    return next(int(x.split()[1]) for x in open("/proc/self/status") if x.startswith("RssAnon")) // 1024
synth = PiperSynthesizer(PiperConfig())
before = anon()
lines = ["Hello! I don't know your name yet. What's your name?", "Nice to meet you, Anna.",
         "I see. Tell me more about your sister and the trip you took to the mountains last summer."]
for i in range(30):
    synth._render(lines[i % 3] + " " * i)
print(anon() - before, synth._voice.session.get_session_options().enable_cpu_mem_arena)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_piper_keeps_no_memory_arena_so_its_lines_leave_little_behind() -> None:
    pytest.importorskip("piper")
    if not TTS.info("piper").installed:
        pytest.skip("the packaged piper voice is not installed")
    out = subprocess.run([sys.executable, "-c", _PIPER_MEMORY], capture_output=True, text=True, check=True)
    grown_mb, arena = out.stdout.split()
    # Measured: 30 lines grew resident memory by 206 MB with onnxruntime's arena, 67-91 MB without.
    assert arena == "False"
    assert int(grown_mb) < 150
