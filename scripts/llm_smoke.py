"""`make install`'s check that the local LLM runs on this machine: one tiny completion.

A llama.cpp build can compile instructions that this CPU (or its hypervisor) refuses: the
process then dies with SIGILL at its first extraction, taking the agent with it. Run in a
child process so that such a death is a one-line error here, not a crash later.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

from egomem import weights
from egomem.config import default_data_dir

CHILD = """
import sys
from llama_cpp import Llama
m = Llama(model_path=sys.argv[1], n_ctx=256, n_threads=2, verbose=False)
out = m.create_chat_completion(messages=[{"role": "user", "content": "Say OK."}], max_tokens=4, temperature=0)
print(repr(out["choices"][0]["message"]["content"]))
"""


def main() -> int:
    if importlib.util.find_spec("llama_cpp") is None:
        print("llm smoke: llama-cpp-python is not installed (the rules extractor is the fallback)")
        return 0
    path = weights.ready_path("qwen2.5-coder-1.5b", default_data_dir())
    if path is None:
        print("llm smoke: the local model is not assembled (the rules extractor is the fallback)")
        return 0
    run = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        why = (
            f"killed by signal {-run.returncode}"
            if run.returncode < 0
            else (run.stderr.strip().splitlines() or ["?"])[-1]
        )
        print(f"llm smoke: error: the local LLM does not run on this machine ({why}); rebuild llama-cpp-python")
        return 1
    print(f"llm smoke: the local LLM runs (said {run.stdout.strip()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
