"""The local model's memory: llama.cpp's CPU weight repacking is off by default, so the weights are held
once (the mapped file), not twice (providers.py `repack_weights`). Real packaged model, in a subprocess so
the process's resident memory is the model's alone; skipped where the model is not assembled."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

MODEL = "qwen2.5-coder-1.5b"

_PROBE = """
import json, sys
def anon():
    status = dict(line.split(":", 1) for line in open("/proc/self/status"))
    return int(status["RssAnon"].split()[0]) // 1024
from egomem.llm.local import LocalLLMProvider
before = anon()
p = LocalLLMProvider(%r, repack_weights=%r)
print(json.dumps({"anon_mb": anon() - before, "extra_bufts": bool(p._llm.model_params.use_extra_bufts)}))
"""


def _load_in_subprocess(repack: bool) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE % (MODEL, repack)], capture_output=True, text=True, timeout=300, check=True
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.usefixtures("packaged_model")
def test_the_default_holds_the_weights_once() -> None:
    default = _load_in_subprocess(False)
    assert default["extra_bufts"] is False
    # Measured: +182 MB of anonymous memory without repacking (KV cache, buffers), +779 MB with it.
    assert isinstance(default["anon_mb"], int) and default["anon_mb"] < 450


@pytest.mark.slow
@pytest.mark.usefixtures("packaged_model")
def test_repacking_keeps_a_second_copy_of_the_weights() -> None:
    repacked = _load_in_subprocess(True)
    assert repacked["extra_bufts"] is True
    assert isinstance(repacked["anon_mb"], int) and repacked["anon_mb"] > 450
