"""A local GGUF model through llama-cpp-python (the optional `gguf` extra).

llama-cpp-python compiles for ~9 minutes on install, so it is not a default
dependency: it is imported only when this provider is built, with a one-line error
naming the extra when it is missing. Output is constrained by the JSON schema
(llama.cpp turns it into a grammar).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from egomem.errors import ConfigError
from egomem.llm.base import ChatProvider, ChatReply, LLMError


class GGUFProvider(ChatProvider):
    name = "gguf"

    def __init__(self, model_path: str | Path, *, n_ctx: int = 8192, max_tokens: int = 2048) -> None:
        super().__init__()
        path = Path(model_path) if model_path else None
        if path is None or not path.is_file():
            raise ConfigError(f"a GGUF model must be a local .gguf file, got {str(model_path)!r}")
        try:
            llama_cpp = importlib.import_module("llama_cpp")
        except ImportError as exc:
            raise ConfigError(
                "the gguf provider needs llama-cpp-python: pip install 'egomem[gguf]' (it compiles for minutes)"
            ) from exc
        self.max_tokens = max_tokens
        self._llm = llama_cpp.Llama(model_path=str(path), n_ctx=n_ctx, verbose=False)

    def chat(self, messages: list[dict[str, str]], json_schema: dict[str, Any], schema_name: str) -> ChatReply:
        try:
            out = self._llm.create_chat_completion(
                messages=messages,
                temperature=0.0,
                max_tokens=self.max_tokens,
                response_format={"type": "json_object", "schema": json_schema},
            )
            content = out["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError, ValueError, RuntimeError) as exc:
            raise LLMError("gguf model failed", f"{type(exc).__name__}: {exc}") from exc
        usage = out.get("usage") or {}
        return ChatReply(
            content=str(content or ""),
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
        )
