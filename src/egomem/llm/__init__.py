"""LLM providers behind one interface: OpenAI-compatible endpoints, a local GGUF model,
and the rule-based offline fallback (which lives with memory: egomem.memory.rules_provider).

This package is a library: it imports none of egomem's layers. Which provider runs is
the `llm` config section, built through the provider registry (egomem.providers).
"""

from __future__ import annotations

from egomem.config import default_data_dir
from egomem.llm.base import ChatProvider, LLMError, LLMProvider, Usage
from egomem.providers import BuildContext, create
from egomem.registry import ProviderConfig

__all__ = ["ChatProvider", "LLMError", "LLMProvider", "Usage", "create_provider"]


def create_provider(cfg: ProviderConfig, ctx: BuildContext | None = None) -> LLMProvider:
    """The provider the `llm` section names (the registry imports it only now)."""
    provider: LLMProvider = create("llm", cfg, ctx or BuildContext(default_data_dir()))
    return provider
