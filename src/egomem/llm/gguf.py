"""The old name of the local GGUF provider: it is egomem.llm.local.LocalLLMProvider
(registered as the `local` LLM provider; `llm.provider = "gguf"` is now `local`)."""

from egomem.llm.local import LocalLLMProvider as GGUFProvider

__all__ = ["GGUFProvider"]
