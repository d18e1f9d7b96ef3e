"""A local instruct model (GGUF) through llama-cpp-python: the default memory extractor and
update agent when installed.

The model is a packaged one (egomem.weights: "qwen2.5-coder-1.5b", assembled once and
sha256-checked; "qwen2.5-coder-0.5b" for little RAM) or a local .gguf path. It is loaded
once per process and shared. Answers are constrained by the task's JSON schema
(llama.cpp compiles it to a grammar) at temperature 0, so they are deterministic: a
failed answer is not retried here, it is an LLMError for the caller's fallback.

Prompt tokens are much of the cost on a CPU: the payload is rendered compactly (fields
only egomem needs are left out), and the fixed system prompt of each task is evaluated
once per process: its state (the KV cache of those tokens, ~30 MB for 1,000 tokens) is
kept per system prompt and restored before a call whose prompt starts with it, so the
extractor, the update agent and any other task may alternate without evaluating their
instructions again. The prefix is always evaluated alone from an empty context, so a
call's result does not depend on which call came before it (deterministic run to run).
"""

from __future__ import annotations

import atexit
import importlib
import json
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from egomem import weights
from egomem.errors import ConfigError
from egomem.llm.base import ChatProvider, ChatReply, LLMError

if TYPE_CHECKING:
    from egomem.providers import BuildContext, LocalLLMConfig

PROMPT_VERSION = 3
# Saved system-prompt states per model (KV only, ~30 MB each for 1,000 tokens); the
# least recently used one is dropped beyond this many.
MAX_PREFIX_STATES = 6
# Payload fields the model does not need: ids, stream times, quotes of items being
# decided on, weights. (Empty values are dropped too.)
_NOT_FOR_MODEL = frozenset({"episode_id", "start", "end", "source_text", "importance", "user_is_subject"})
# Schema keywords that only inflate the grammar (a maxLength of 1000 becomes 1000 rules);
# pydantic validates them after the answer anyway.
_NOT_FOR_GRAMMAR = frozenset({"title", "description", "default", "maxLength", "minLength", "examples"})

_MODELS: dict[tuple[str, int, int, int, int, int], _Model] = {}
_MODELS_LOCK = threading.Lock()


def resolve_model_path(model: str, data_dir: Path | None = None) -> Path:
    """A packaged model name or a local .gguf path -> the .gguf file (assembled if needed)."""
    if model in weights.MODELS:
        return weights.ensure_kind(model, "gguf", data_dir, "GGUF language model", "qwen2.5-coder-1.5b or -0.5b")
    p = Path(model).expanduser() if model else None
    if p is None or p.suffix != ".gguf" or not p.is_file():
        raise ConfigError(
            f"local LLM {str(model)!r} is not a packaged model (qwen2.5-coder-1.5b, qwen2.5-coder-0.5b) "
            "nor a local .gguf file"
        )
    return p


class _Model:
    """One loaded llama.cpp model, its lock, and the saved states of the system prompts it has seen."""

    def __init__(self, llm: Any, llama_cpp: Any) -> None:
        self.llm = llm
        self.lock = threading.Lock()
        self.llama_cpp = llama_cpp
        self.formatter = _formatter(llm, llama_cpp)
        self.prefixes: OrderedDict[str, tuple[list[int], Any]] = OrderedDict()  # system text -> (tokens, state)
        self.grammars: dict[str, Any] = {}

    def tokens(self, messages: list[dict[str, str]]) -> tuple[list[int], list[str]]:
        """The prompt's tokens as the model's chat template gives them, and its stop strings."""
        res = self.formatter(messages=messages)
        ids = self.llm.tokenize(res.prompt.encode("utf-8"), add_bos=not res.added_special, special=True)
        return list(ids), list(res.stop or [])

    def grammar(self, schema: dict[str, Any]) -> Any:
        key = json.dumps(schema, sort_keys=True)
        if key not in self.grammars:  # compiling a schema to GBNF costs CPU on every call otherwise
            self.grammars[key] = self.llama_cpp.LlamaGrammar.from_json_schema(key, verbose=False)
        return self.grammars[key]

    def prefix(self, system: str) -> list[int]:
        """The tokens the prompts with this system message share whatever the user says."""
        if system in self.prefixes:
            self.prefixes.move_to_end(system)
            return self.prefixes[system][0]
        a, _ = self.tokens([{"role": "system", "content": system}, {"role": "user", "content": "x"}])
        b, _ = self.tokens([{"role": "system", "content": system}, {"role": "user", "content": "y"}])
        n = next((i for i, (p, q) in enumerate(zip(a, b, strict=False)) if p != q), min(len(a), len(b)))
        # Evaluated alone, from an empty context: the same KV whatever came before.
        self.llm.reset()
        self.llm.eval(a[:n])
        state = self.llm.save_state()
        # Sampling runs in llama.cpp's sampler: the saved Python-side logits rows (n_batch x
        # vocabulary floats, 311 MB) are not needed, one row keeps load_state's shape.
        state.scores = state.scores[-1:].copy()
        self.prefixes[system] = (a[:n], state)
        while len(self.prefixes) > MAX_PREFIX_STATES:
            self.prefixes.popitem(last=False)
        return a[:n]

    def start_from(self, system: str, prompt: list[int]) -> int:
        """Put the context at the saved state of `system` when `prompt` starts with it;
        returns how many prompt tokens that state covers (0: no reuse)."""
        pre = self.prefix(system)
        n = len(pre)
        if n == 0 or n >= len(prompt) or prompt[:n] != pre:
            return 0
        if self.llm.n_tokens >= n and list(self.llm.input_ids[:n]) == pre:
            # The context holds the prefix (and the previous call's rest): keep the prefix only.
            # Tokens past it may match this prompt too, but reusing them would make an answer
            # depend on the call before it; llama.cpp drops the rest before it evaluates.
            self.llm.n_tokens = n
        else:
            self.llm.load_state(self.prefixes[system][1])
        return n


def _formatter(llm: Any, llama_cpp: Any) -> Any:
    """The model's own chat template (the GGUF metadata's), as llama-cpp-python applies it."""
    template = llm.metadata.get("tokenizer.chat_template")
    if not template:
        raise ConfigError("the local model has no chat template in its GGUF metadata")
    fmt = importlib.import_module("llama_cpp.llama_chat_format")
    eos_id, bos_id = llm.token_eos(), llm.token_bos()
    eos = llm._model.token_get_text(eos_id) if eos_id != -1 else ""
    bos = llm._model.token_get_text(bos_id) if bos_id != -1 else ""
    return fmt.Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos, stop_token_ids=[eos_id])


@contextmanager
def _weight_repack(llama_cpp: Any, on: bool) -> Iterator[None]:
    """llama.cpp's "extra buffer types" (weights repacked for the CPU's wide-vector and AMX
    kernels) on or off while a model loads; llama-cpp-python has no argument for it."""
    low = llama_cpp.llama_cpp
    default = low.llama_model_default_params

    def params() -> Any:
        p = default()
        p.use_extra_bufts = on
        return p

    low.llama_model_default_params = params
    try:
        yield
    finally:
        low.llama_model_default_params = default


def _load(path: Path, n_ctx: int, n_threads: int, draft_tokens: int, n_batch: int, repack: bool) -> _Model:
    key = (str(path.resolve()), n_ctx, n_threads, draft_tokens, n_batch, int(repack))
    with _MODELS_LOCK:
        if key not in _MODELS:
            try:
                llama_cpp = importlib.import_module("llama_cpp")
            except ImportError as exc:
                raise ConfigError(
                    "the local LLM needs the pip package llama-cpp-python==0.3.36 (no binary wheel: "
                    "`make install` builds and caches it)"
                ) from exc
            draft = None
            if draft_tokens:
                speculative = importlib.import_module("llama_cpp.llama_speculative")
                draft = speculative.LlamaPromptLookupDecoding(num_pred_tokens=draft_tokens)
            try:
                with _weight_repack(llama_cpp, repack):
                    llm = llama_cpp.Llama(
                        model_path=key[0],
                        n_ctx=n_ctx,
                        n_threads=n_threads,
                        n_threads_batch=n_threads,
                        n_batch=n_batch,
                        draft_model=draft,
                        verbose=False,
                    )
            except (ValueError, RuntimeError) as exc:
                raise ConfigError(f"llama.cpp cannot load {path.name}: {exc}") from exc
            _MODELS[key] = _Model(llm, llama_cpp)
        return _MODELS[key]


@atexit.register
def _close_models() -> None:
    # Free the models while the interpreter is intact: llama-cpp-python's own finaliser
    # fails noisily when it runs during interpreter teardown.
    with _MODELS_LOCK:
        for m in _MODELS.values():
            m.llm.close()
        _MODELS.clear()


class LocalLLMProvider(ChatProvider):
    name = "local"

    def __init__(
        self,
        model: str | Path = "qwen2.5-coder-1.5b",
        *,
        data_dir: Path | None = None,
        n_ctx: int = 4096,
        n_threads: int = 2,
        max_tokens: int = 768,
        draft_tokens: int = 0,
        n_batch: int = 512,
        weight_repack: bool = False,
        prompt_version: int = PROMPT_VERSION,
    ) -> None:
        super().__init__(prompt_version=prompt_version)
        self.model_name = str(model)
        self.model_path = resolve_model_path(self.model_name, data_dir)
        self.max_tokens = max_tokens
        self._model = _load(self.model_path, n_ctx, n_threads, draft_tokens, n_batch, weight_repack)
        self._llm, self._lock = self._model.llm, self._model.lock

    @classmethod
    def from_config(cls, cfg: LocalLLMConfig, ctx: BuildContext) -> LocalLLMProvider:
        return cls(
            cfg.model,
            data_dir=ctx.data_dir,
            n_ctx=cfg.n_ctx,
            n_threads=cfg.n_threads,
            max_tokens=cfg.max_tokens,
            draft_tokens=cfg.draft_tokens,
            n_batch=cfg.n_batch,
            weight_repack=cfg.weight_repack,
            prompt_version=cfg.prompt_version,
        )

    def render_payload(self, payload: BaseModel) -> str:
        return json.dumps(_compact(payload.model_dump(mode="json")), ensure_ascii=False)

    def chat(self, messages: list[dict[str, str]], json_schema: dict[str, Any], schema_name: str) -> ChatReply:
        system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
        try:
            with self._lock:
                prompt, stop = self._model.tokens(messages)
                cached = self._model.start_from(system, prompt) if system else 0
                out = self._llm.create_completion(
                    prompt=prompt,
                    temperature=0.0,
                    max_tokens=self.max_tokens,
                    stop=stop,
                    grammar=self._model.grammar(grammar_schema(json_schema)),
                )
        except ValueError as exc:
            # llama-cpp-python raises ValueError when the prompt does not fit the context.
            raise LLMError("local model failed", f"{type(exc).__name__}: {str(exc)[:200]}") from exc
        except RuntimeError as exc:
            raise LLMError("local model failed", f"{type(exc).__name__}: {str(exc)[:200]}") from exc
        reply = reply_from_completion(out)
        reply.cached_prompt_tokens = cached
        return reply

    def drop_prefix_cache(self) -> None:
        """Keep no saved system-prompt states (~30 MB each) for this model. llama.cpp still
        reuses the prefix its context shares with the previous prompt, which is all a caller
        that sends related prompts in a row needs."""
        with self._lock:
            self._llm.set_cache(None)
            model = getattr(self, "_model", None)
            if model is not None:
                model.prefixes.clear()

    def complete(
        self,
        messages: list[dict[str, str]],
        *,
        stop: list[str] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> ChatReply:
        """One free-text completion (the cascaded dialog model run on the local model), the
        same call as `OpenAICompatProvider.complete`; counted in `usage` like a task."""
        self.usage.calls += 1
        try:
            with self._lock:
                out = self._llm.create_chat_completion(
                    messages=messages,
                    temperature=0.0 if temperature is None else temperature,
                    max_tokens=self.max_tokens if max_tokens is None else max_tokens,
                    stop=list(stop) if stop else None,
                )
            choice = out["choices"][0]
            content = str(choice["message"]["content"] or "")
        except (ValueError, RuntimeError, KeyError, IndexError, TypeError) as exc:
            self.usage.failures += 1
            raise LLMError("local model failed", f"{type(exc).__name__}: {str(exc)[:200]}") from exc
        usage = out.get("usage") or {}
        reply = ChatReply(content, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))
        self.usage.prompt_tokens += reply.prompt_tokens
        self.usage.completion_tokens += reply.completion_tokens
        return reply


def reply_from_completion(out: Any) -> ChatReply:
    """The ChatReply of a llama-cpp-python (chat) completion; a cut-off or empty answer is an
    LLMError (its JSON would be incomplete)."""
    try:
        choice = out["choices"][0]
        content = choice["message"]["content"] if "message" in choice else choice["text"]
    except (KeyError, IndexError, TypeError) as exc:
        raise LLMError("local model failed", f"unexpected completion shape: {type(exc).__name__}") from exc
    if choice.get("finish_reason") == "length":
        raise LLMError("answer cut off", "the model hit max_tokens before closing its JSON")
    if not content or not str(content).strip():
        raise LLMError("malformed JSON", "empty answer")
    usage = out.get("usage") or {}
    return ChatReply(
        content=str(content),
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
    )


def grammar_schema(schema: Any) -> Any:
    """`schema` without the keywords that only bloat llama.cpp's grammar."""
    if isinstance(schema, dict):
        return {k: grammar_schema(v) for k, v in schema.items() if k not in _NOT_FOR_GRAMMAR}
    if isinstance(schema, list):
        return [grammar_schema(v) for v in schema]
    return schema


def _empty(v: Any) -> bool:
    # `is False`, not `== False`: an index or a similarity of 0 stays.
    return v is None or v is False or (isinstance(v, (str, list, dict)) and not v)


def _compact(data: Any) -> Any:
    if isinstance(data, dict):
        kept = {k: _compact(v) for k, v in data.items() if k not in _NOT_FOR_MODEL}
        return {k: v for k, v in kept.items() if not _empty(v)}
    if isinstance(data, list):
        return [_compact(v) for v in data]
    return data
