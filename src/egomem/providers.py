"""The built-in providers of every component kind: their config models and where they live.

Config models are plain data (imported by `egomem.config` to validate each section);
targets are dotted paths imported only when that provider is built. A provider class
is built with `cls.from_config(cfg, ctx)`, where `cfg` is an instance of its config model
and `ctx` a `BuildContext` (data directory, shared models).

Adding a backend is one module plus one call, e.g. for ASR:

    ASR.register("vosk", "my_pkg.vosk_asr:VoskASR", VoskConfig, requires=("vosk",))
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from egomem.registry import NoConfig, ProviderConfig, registry


@dataclass
class BuildContext:
    """What a provider may need besides its own config: where assembled model files live,
    and already-loaded shared components (by name) so heavy models load once."""

    data_dir: Path
    shared: dict[str, Any] = field(default_factory=dict)


# -- ASR ------------------------------------------------------------------------------
class PocketSphinxConfig(ProviderConfig):
    pass


class WhisperConfig(ProviderConfig):
    # A packaged model name ("base": Whisper base, multilingual 74M; "tiny.en": English 39M)
    # or the path of a local CTranslate2 Whisper directory (model.bin + config.json).
    model: str = "base"
    beam_size: int = Field(default=5, ge=1, le=10)
    compute_type: str = "int8"
    cpu_threads: int = Field(default=2, ge=1)
    language: str = "en"
    # Names already in memory go to the decoder as hotwords so they are spelled right.
    hotwords_from_memory: bool = True


ASR = registry("asr")
ASR.register("pocketsphinx", "egomem.perception.asr:PocketSphinxASR", PocketSphinxConfig,
             requires=("pocketsphinx",), description="CMU pocketsphinx en-us (last-resort fallback)")
ASR.register("faster-whisper", "egomem.perception.whisper:FasterWhisperASR", WhisperConfig,
             requires=("faster_whisper",), description="Whisper through CTranslate2 (base or tiny.en, packaged)")


# -- LLM (memory extractor and update agent; the cascaded dialog model) ------------------
class RulesLLMConfig(ProviderConfig):
    pass


class OpenAILLMConfig(ProviderConfig):
    base_url: str = ""
    model: str = ""
    api_key_env: str = "EGOMEM_LLM_API_KEY"  # the key itself is never written to config
    timeout_s: float = Field(default=30.0, gt=0.0)
    max_retries: int = Field(default=3, ge=0)


class LocalLLMConfig(ProviderConfig):
    # A packaged model name ("qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b") or a local .gguf path.
    model: str = "qwen2.5-coder-1.5b"
    n_ctx: int = Field(default=4096, ge=512)
    n_threads: int = Field(default=2, ge=1)
    max_tokens: int = Field(default=768, ge=16)
    # When the model or llama-cpp-python is missing, use the rules (with a one-line notice)
    # instead of failing; a model answer that fails validation is retried once, then rules.
    fallback_to_rules: bool = True


LLM = registry("llm")
LLM.register("rules", "egomem.llm.rules:RulesProvider", RulesLLMConfig,
             description="deterministic rules, no model (the fallback)")
LLM.register("openai", "egomem.llm.openai_compat:OpenAICompatProvider", OpenAILLMConfig,
             requires=("httpx",), description="any OpenAI-compatible chat endpoint")
LLM.register("local", "egomem.llm.local:LocalLLMProvider", LocalLLMConfig,
             requires=("llama_cpp",), description="a packaged or local GGUF model through llama-cpp-python")


# -- episodic trigger -----------------------------------------------------------------------
TRIGGER = registry("trigger")
TRIGGER.register("model", "egomem.memory.trigger.tagger:EpisodicTrigger", NoConfig,
                 requires=("torch",), description="conv + BiGRU tagger (shipped weights)")
TRIGGER.register("rules", "egomem.memory.trigger.rules:RuleTrigger", NoConfig,
                 description="energy/VAD rule baseline")


# -- dialog model ---------------------------------------------------------------------------
class TemplateDialogConfig(ProviderConfig):
    pass


DIALOG = registry("dialog")
DIALOG.register("template", "egomem.dialog.template:TemplateResponder", TemplateDialogConfig,
                description="offline template responder (no language model)")
DIALOG.register("openai", "egomem.dialog.cascaded:CascadedChatModel", OpenAILLMConfig,
                requires=("httpx",), description="cascaded chat model over an OpenAI-compatible endpoint")


# -- store ----------------------------------------------------------------------------------
class SQLiteStoreConfig(ProviderConfig):
    busy_timeout_ms: int = Field(default=10_000, ge=0)


class PostgresStoreConfig(ProviderConfig):
    dsn: str = ""  # postgresql://user:pass@host:port/db
    busy_timeout_ms: int = Field(default=10_000, ge=0)


STORE = registry("store")
STORE.register("sqlite", "egomem.store.sqlite:SQLiteStore", SQLiteStoreConfig,
               requires=("sqlalchemy",), description="embedded SQLite (default)")
STORE.register("postgres", "egomem.store.postgres:PostgresStore", PostgresStoreConfig,
               requires=("sqlalchemy", "psycopg", "pgvector"), description="PostgreSQL + pgvector, for fleets")

ProviderName = Literal["asr", "llm", "trigger", "dialog", "store"]
