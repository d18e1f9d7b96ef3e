"""Which language model answers or judges: `local:<model>` or `openai:<model>@<base_url>`.

`local:` names a packaged GGUF model (qwen2.5-coder-1.5b, qwen2.5-coder-0.5b) or a local
.gguf path, run through llama-cpp-python (answers constrained by a JSON-schema grammar);
`openai:` any OpenAI-compatible endpoint, its key from $EGOMEM_EVAL_API_KEY (never a flag).
Two specs name the same model when they resolve to the same file or the same endpoint model.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from egomem.errors import InputError
from egomem.weights import MODELS

if TYPE_CHECKING:
    from egomem.llm.local import LocalLLMProvider
    from egomem.llm.openai_compat import OpenAICompatProvider

API_KEY_ENV = "EGOMEM_EVAL_API_KEY"


@dataclass(frozen=True)
class ModelSpec:
    kind: str  # "local" or "openai"
    model: str
    base_url: str = ""

    @property
    def label(self) -> str:
        return f"{self.kind}:{self.model}" + (f"@{self.base_url}" if self.base_url else "")

    def identity(self) -> tuple[str, str, str]:
        """What makes two specs the same model (a packaged name and its path are not told apart here:
        a path is compared resolved)."""
        if self.kind == "local" and self.model not in MODELS:
            return (self.kind, str(Path(self.model).expanduser().resolve()), "")
        return (self.kind, self.model.lower(), self.base_url.rstrip("/"))


def parse_spec(spec: str) -> ModelSpec:
    kind, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise InputError(f"model {spec!r}: expected local:<model> or openai:<model>@<base_url>")
    if kind == "local":
        return ModelSpec("local", rest)
    if kind == "openai":
        model, at, url = rest.rpartition("@")
        if not at or not model or not url:
            raise InputError(f"model {spec!r}: expected openai:<model>@<base_url> (e.g. openai:qwen@http://h:8000/v1)")
        return ModelSpec("openai", model, url)
    raise InputError(f"model {spec!r}: unknown kind {kind!r} (local or openai)")


def family(spec: ModelSpec) -> str:
    """The model family a spec names, by the first letters of its model (or file) name: qwen2.5-coder-1.5b
    and Qwen2.5-72B-Instruct are both `qwen`, gpt-4o is `gpt`. Two models of one family share training data
    and habits, so a judge of the answerer's family may favour its answers (a limitation to state)."""
    name = Path(spec.model).name if spec.kind == "local" and spec.model not in MODELS else spec.model
    found = re.match(r"[a-z]+", name.lower())
    return found.group(0) if found else name.lower()


def check_different(judge: ModelSpec, answerer: ModelSpec | None) -> None:
    """The judge must not grade its own answers."""
    if answerer is not None and judge.identity() == answerer.identity():
        raise InputError(f"the judge ({judge.label}) must differ from the answering model ({answerer.label})")


def build(
    spec: ModelSpec, *, max_tokens: int = 256, n_ctx: int = 4096, threads: int = 2
) -> LocalLLMProvider | OpenAICompatProvider:
    """The provider behind a spec; a missing local model or llama-cpp-python is a ConfigError."""
    if spec.kind == "local":
        from egomem.llm.local import LocalLLMProvider

        provider = LocalLLMProvider(spec.model, n_ctx=n_ctx, n_threads=threads, max_tokens=max_tokens)
        # Turns are sent so that related prompts follow each other (dialog.run_eval): the model's own
        # context reuse is enough, and two models' RAM prefix caches got a run killed for memory.
        provider.drop_prefix_cache()
        return provider
    from egomem.llm.openai_compat import OpenAICompatProvider

    return OpenAICompatProvider(
        spec.base_url, spec.model, api_key=os.environ.get(API_KEY_ENV) or None, max_tokens=max_tokens, max_retries=1
    )
