"""LLM providers behind one interface: OpenAI-compatible endpoints, optional local GGUF, rule-based offline default."""

from __future__ import annotations

from egomem.config import LLMConfig
from egomem.errors import ConfigError
from egomem.llm.base import ChatProvider, LLMError, LLMProvider, Usage

__all__ = ["ChatProvider", "LLMError", "LLMProvider", "Usage", "create_provider"]


def create_provider(cfg: LLMConfig) -> LLMProvider:
    """The backend `llm.provider` names; heavy or optional imports happen only here."""
    if cfg.provider == "rules":
        from egomem.llm.rules import RulesProvider

        return RulesProvider()
    if cfg.provider == "openai":
        from egomem.llm.openai_compat import OpenAICompatProvider

        return OpenAICompatProvider.from_config(cfg)
    if cfg.provider == "gguf":
        from egomem.llm.gguf import GGUFProvider

        return GGUFProvider.from_config(cfg)
    raise ConfigError(f"unknown llm provider {cfg.provider!r}; use rules, openai or gguf")
