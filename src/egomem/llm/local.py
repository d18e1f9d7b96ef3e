"""A local instruct model (GGUF) through llama-cpp-python: the default memory extractor and
update agent when installed.

The model is a packaged one (egomem.weights: "qwen2.5-coder-1.5b", assembled once and
sha256-checked; "qwen2.5-coder-0.5b" for little RAM) or a local .gguf path. It is loaded
once per process and shared. Answers are constrained by the task's JSON schema
(llama.cpp compiles it to a grammar) at temperature 0, so they are deterministic: a
failed answer is not retried here, it is an LLMError for the caller's fallback.

Prompt tokens are most of the cost on a CPU: the payload is rendered compactly (fields
only egomem needs are left out), and the fixed system prompt of a task comes first, so its
evaluated state is reused by the next call (`prefix_cache`):
- "context": llama.cpp keeps the tokens of the last call in its context; the next prompt
  of the same task evaluates only what follows its system message (the default, one
  extraction per session). The reuse stops there even when the payloads begin alike, so a
  prompt is always computed from the same position and its answer does not depend on what
  was asked before (`_start_at_system_end`);
- "ram": also a LlamaRAMCache of the states after each call, so tasks that alternate
  (extraction, then an LLM update plan) each find their own prefix again; each call then
  copies its whole state (KV and a logits buffer, hundreds of MB) into the cache;
- "off": every prompt evaluated whole (the cost without reuse, for measuring).
`usage.prompt_tokens_evaluated` counts the prompt tokens actually computed (llama.cpp's own
counters), so the reuse is measured, not assumed (`egomem bench xcost`).
"""

from __future__ import annotations

import atexit
import copy
import importlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from pydantic import BaseModel

from egomem import weights
from egomem.errors import ConfigError
from egomem.llm.base import ChatProvider, ChatReply, LLMError, PromptTooLong
from egomem.llm.drafts import Drafting, Processor, RecentLookup, ScoreRows, install_scores
from egomem.llm.grammar import GrammarOnRefusal
from egomem.llm.loops import COPIES, LoopStop

if TYPE_CHECKING:
    from egomem.providers import BuildContext, LocalLLMConfig

PROMPT_VERSION = 2
# The prefix reuse of the default is "context" (see the module docstring and docs/benchmarks/xcost.md).
PrefixCache = Literal["context", "ram", "off"]
# A cached prefix keeps its KV (~20 MB for a 1,000-token prompt) and up to n_batch rows of
# logits (512 x 151,936 floats = 311 MB): 512 MB holds the last prompt, whose system part
# is the next prompt's prefix. (1 GB held three such states: 4.0 GB peak RSS in bench realtime.)
PREFIX_CACHE_BYTES = 512 << 20
# Qwen2.5's chat template around each message: "<|im_start|>role\n" ... "<|im_end|>\n", and the
# assistant's opening: at most this many tokens a message beyond its text.
_TEMPLATE_TOKENS = 6
# Payload fields the model does not need: ids, stream times, quotes of items being
# decided on, weights. (Empty values are dropped too.)
_NOT_FOR_MODEL = frozenset({"episode_id", "start", "end", "source_text", "importance", "user_is_subject"})
# Schema keywords that only inflate the grammar (a maxLength of 1000 becomes 1000 rules);
# pydantic validates them after the answer anyway.
_NOT_FOR_GRAMMAR = frozenset({"title", "description", "default", "maxLength", "minLength", "examples"})

_UNSET: Any = object()
# A loaded model, its lock, and with `draft_tokens` its draft model and score rows (llm/drafts.py).
_Loaded = tuple[Any, threading.Lock, tuple[RecentLookup, ScoreRows] | None]
_MODELS: dict[tuple[str, int, int, bool], _Loaded] = {}
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


def _load(
    path: Path,
    n_ctx: int,
    n_threads: int,
    draft_tokens: int,
    prefix_cache: PrefixCache = "context",
    repack_weights: bool = False,
) -> _Loaded:
    # Not keyed by threads: one model serves answers and memory, each call setting its own threads.
    key = (str(path.resolve()), n_ctx, draft_tokens, repack_weights)
    with _MODELS_LOCK:
        if key not in _MODELS:
            try:
                llama_cpp = importlib.import_module("llama_cpp")
            except ImportError as exc:
                raise ConfigError(
                    "the local LLM needs the pip package llama-cpp-python==0.3.36 (no binary wheel: "
                    "`make install` builds and caches it)"
                ) from exc
            draft = RecentLookup(draft_tokens) if draft_tokens else None
            try:
                with _model_params(llama_cpp, use_extra_bufts=repack_weights):
                    llm = llama_cpp.Llama(
                        model_path=key[0],
                        n_ctx=n_ctx,
                        n_threads=n_threads,
                        n_threads_batch=n_threads,
                        draft_model=draft,
                        verbose=False,
                    )
            except (ValueError, RuntimeError) as exc:
                raise ConfigError(f"llama.cpp cannot load {path.name}: {exc}") from exc
            drafts = None
            if draft is not None:
                drafts = (draft, install_scores(llm))
                llm._logits_all = False  # on only while an answer is drafted (llm/drafts.py)
            _MODELS[key] = (llm, threading.Lock(), drafts)
        llm, lock, drafts = _MODELS[key]
        # The model is shared: the last provider built says whether it keeps a RAM cache.
        with lock:
            if prefix_cache == "ram" and llm.cache is None:
                llm.set_cache(importlib.import_module("llama_cpp").LlamaRAMCache(capacity_bytes=PREFIX_CACHE_BYTES))
            elif prefix_cache != "ram":
                llm.set_cache(None)
        return llm, lock, drafts


@contextmanager
def _model_params(llama_cpp: Any, **fields: Any) -> Iterator[None]:
    """Model parameters that `Llama()` takes no argument for (`use_extra_bufts`): its constructor starts
    from `llama_model_default_params()`, so that function is wrapped while one model is built (under
    `_MODELS_LOCK`, the only place that builds one)."""
    low = llama_cpp.llama_cpp
    default = low.llama_model_default_params

    def params() -> Any:
        p = default()
        for name, value in fields.items():
            if not hasattr(p, name):
                raise ConfigError(f"this llama-cpp-python has no model parameter {name!r}")
            setattr(p, name, value)
        return p

    low.llama_model_default_params = params
    try:
        yield
    finally:
        low.llama_model_default_params = default


@atexit.register
def _close_models() -> None:
    # Free the models while the interpreter is intact: llama-cpp-python's own finaliser
    # fails noisily when it runs during interpreter teardown.
    with _MODELS_LOCK:
        for llm, _, _ in _MODELS.values():
            llm.close()
        _MODELS.clear()


class LocalLLMProvider(ChatProvider):
    name = "local"
    prefix_cache: PrefixCache = "context"

    def __init__(
        self,
        model: str | Path = "qwen2.5-coder-1.5b",
        *,
        data_dir: Path | None = None,
        n_ctx: int = 4096,
        n_threads: int = 2,
        memory_threads: int | None = None,
        max_tokens: int = 768,
        draft_tokens: int = 0,
        prompt_version: int = PROMPT_VERSION,
        prefix_cache: PrefixCache = "context",
        repack_weights: bool = False,
    ) -> None:
        super().__init__(prompt_version=prompt_version)
        if draft_tokens and prefix_cache == "ram":
            # A RAM-cached state copies the logits of every evaluated token, and drafting keeps a row
            # for every position (n_ctx x vocabulary floats): up to 2.5 GB copied after each call.
            raise ConfigError("llm.draft_tokens needs llm.prefix_cache = context or off, not ram")
        self.model_name = str(model)
        self.model_path = resolve_model_path(self.model_name, data_dir)
        self.max_tokens = max_tokens
        self.n_threads = n_threads
        self.memory_threads = memory_threads or n_threads
        self.draft_tokens = draft_tokens
        self.prefix_cache = prefix_cache
        self._system_tokens: dict[str, int] = {}  # a few tasks' prompts, each a few KB
        self._chat_formatter: Any = _UNSET
        self._llm, self._lock, self._drafts = _load(
            self.model_path, n_ctx, n_threads, draft_tokens, prefix_cache, repack_weights
        )

    @classmethod
    def from_config(cls, cfg: LocalLLMConfig, ctx: BuildContext) -> LocalLLMProvider:
        return cls(
            cfg.model,
            data_dir=ctx.data_dir,
            n_ctx=cfg.n_ctx,
            n_threads=cfg.n_threads,
            memory_threads=cfg.memory_threads,
            max_tokens=cfg.max_tokens,
            draft_tokens=cfg.draft_tokens,
            prefix_cache=cfg.prefix_cache,
            repack_weights=cfg.repack_weights,
        )

    def for_memory(self) -> LocalLLMProvider:
        """This provider at `memory_threads`, sharing the loaded model (and its usage counters)."""
        if self.memory_threads == self.n_threads:
            return self
        twin = copy.copy(self)
        twin.n_threads = self.memory_threads
        return twin

    def _use_threads(self) -> None:
        """The shared model computes this call with this provider's threads (under the model's lock)."""
        if self._llm.n_threads != self.n_threads:
            self._llm._ctx.set_n_threads(self.n_threads, self.n_threads)
            self._llm.n_threads = self._llm.n_threads_batch = self.n_threads

    def render_payload(self, payload: BaseModel) -> str:
        return json.dumps(_compact(payload.model_dump(mode="json")), ensure_ascii=False)

    def _check_fits(self, messages: list[dict[str, str]]) -> None:
        """PromptTooLong unless the prompt leaves `max_tokens` of the context for the answer: an
        answer cut off by the context's end is no JSON, and llama-cpp-python only refuses a
        prompt that fills the whole context. Counted on the messages' text (the chat template
        adds a few markers per message), before any token is computed."""
        n = sum(self._tokens_in(m) for m in messages) + _TEMPLATE_TOKENS * len(messages)
        if n + self.max_tokens > self._llm.n_ctx():
            raise PromptTooLong(f"{n} prompt tokens + {self.max_tokens} for the answer > context {self._llm.n_ctx()}")

    def _tokens_in(self, message: dict[str, str]) -> int:
        """Tokens of a message's text; a task's system prompt (the same every call) counted once."""
        system = message["role"] == "system"
        if system and (n := self._system_tokens.get(message["content"])) is not None:
            return n
        n = len(self._llm.tokenize(message["content"].encode("utf-8"), add_bos=False, special=True))
        if system:
            self._system_tokens[message["content"]] = n
        return n

    def chat(self, messages: list[dict[str, str]], json_schema: dict[str, Any], schema_name: str) -> ChatReply:
        self._check_fits(messages)
        try:
            with self._lock, self._drafting() as drafting:
                self._use_threads()
                before = perf_counters(self._llm)
                if self.prefix_cache == "off":
                    self._llm.reset()  # forget the evaluated tokens: the whole prompt is computed
                elif self.prefix_cache == "context":
                    self._start_at_system_end(messages)
                out = self._complete_json(messages, grammar_schema(json_schema), drafting)
                after = perf_counters(self._llm)
        except ValueError as exc:
            # llama-cpp-python raises ValueError when the prompt does not fit the context.
            if "exceed context window" in str(exc):
                raise PromptTooLong(str(exc)[:200]) from exc
            raise LLMError("local model failed", f"{type(exc).__name__}: {str(exc)[:200]}") from exc
        except RuntimeError as exc:
            raise LLMError("local model failed", f"{type(exc).__name__}: {str(exc)[:200]}") from exc
        reply = reply_from_completion(out)
        reply.prompt_tokens_evaluated = max(0, int(after.prompt_tokens - before.prompt_tokens))
        reply.prompt_eval_s = max(0.0, after.prompt_s - before.prompt_s)
        reply.decode_s = max(0.0, after.decode_s - before.decode_s)
        if drafting is not None and drafting.prompt_s is not None:
            # llama.cpp counts a drafted batch (more than one token) as prompt: move it to generation.
            reply.prompt_tokens_evaluated = max(0, reply.prompt_tokens_evaluated - drafting.draft.batched_tokens)
            computed = reply.prompt_eval_s + reply.decode_s
            reply.prompt_eval_s = min(computed, drafting.prompt_s)
            reply.decode_s = computed - reply.prompt_eval_s
        return reply

    @contextmanager
    def _drafting(self) -> Iterator[Drafting | None]:
        """With `draft_tokens`, the drafting of one completion (llm/drafts.py), under the model's lock."""
        if self._drafts is None:
            yield None
            return
        drafting = Drafting(self._llm, *self._drafts)
        drafting.begin()
        try:
            yield drafting
        finally:
            drafting.end()

    def _start_at_system_end(self, messages: list[dict[str, str]]) -> None:
        """Leave the context holding exactly the prompt's leading system message, evaluated on its
        own from position 0, so that the rest of the prompt is always computed from the same
        position in the same batches, whatever was asked before.

        llama.cpp reuses the longest prefix the context shares with the previous prompt and computes
        the rest in batches from there. A last batch of fewer than 8 tokens takes another matmul
        path, whose logits differ from the one-batch result by up to 0.5 (measured on three
        extraction prompts of ~900 tokens; batches of 8 or more from any start gave identical
        logits). That happened whenever the context already held a prompt but for its last few
        tokens (the same prompt asked again: its last token was replayed alone), or a fresh
        context cut a prompt into 512-token batches with a short last one: 7 of 19 same-prompt
        re-asks in `bench extract` (cf91a4d's run) gave another greedy answer. The system prompt's
        reuse, the part that matters for cost, is kept."""
        head = self._system_head(messages)
        n = len(head)
        if n == 0:
            return
        if self._llm.n_tokens >= n and list(self._llm._input_ids[:n]) == head:
            self._llm.n_tokens = n  # generate() drops the KV cells after it
        else:
            self._llm.reset()
            self._llm.eval(head)

    def _system_head(self, messages: list[dict[str, str]]) -> list[int]:
        """The prompt's tokens up to the end of its system message, as the chat handler tokenizes
        the whole prompt (the model's own template); [] when there is no system message or the
        template cannot be rendered here (then the reuse is llama.cpp's own, as before)."""
        if not messages or messages[0]["role"] != "system":
            return []
        fmt = self._formatter()
        if fmt is None:
            return []
        try:
            full = fmt(messages=messages)
            alone = fmt(messages=messages[:1])
        except Exception:  # a template that needs more than a system message: no alignment
            return []
        a = self._tokenize_prompt(full.prompt, full.added_special)
        b = self._tokenize_prompt(alone.prompt, alone.added_special)
        n = 0
        for x, y in zip(a, b, strict=False):
            if x != y:
                break
            n += 1
        return a[:n] if n < len(a) else []

    def _tokenize_prompt(self, prompt: str, added_special: bool) -> list[int]:
        # As llama-cpp-python's chat handler tokenizes a formatted prompt.
        return list(self._llm.tokenize(prompt.encode("utf-8"), add_bos=not added_special, special=True))

    def _formatter(self) -> Any:
        """A renderer of the model's chat template (the one create_chat_completion uses), or None."""
        if self._chat_formatter is _UNSET:
            self._chat_formatter = None
            template = (self._llm.metadata or {}).get("tokenizer.chat_template")
            if template and self._llm.chat_format == "chat_template.default" and self._llm.chat_handler is None:
                chat_format = importlib.import_module("llama_cpp.llama_chat_format")
                # The texts llama-cpp-python gives its own formatter (Llama.__init__).
                eos, bos = (
                    ("" if i == -1 else self._llm._model.token_get_text(i))
                    for i in (self._llm.token_eos(), self._llm.token_bos())
                )
                self._chat_formatter = chat_format.Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)
        return self._chat_formatter

    def _complete_json(self, messages: list[dict[str, str]], schema: dict[str, Any], drafting: Drafting | None) -> Any:
        """The completion under the schema's grammar: checked token by token only when the model's
        best token breaks it (llm/grammar.py; same answer, less sampling), with prompt-lookup drafts
        when `drafting` (llm/drafts.py: the processors then see the accepted tokens only)."""
        llama_cpp = importlib.import_module("llama_cpp")
        try:
            gbnf = llama_cpp.LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)._grammar
        except Exception:  # a schema the converter cannot take: any JSON, as llama-cpp-python does then
            gbnf = llama_cpp.llama_grammar.JSON_GBNF
        check = GrammarOnRefusal(self._llm, gbnf)
        loop = LoopStop(int(self._llm.token_eos()))
        processors: list[Processor] = [check, loop]
        if drafting is not None:
            drafting.processors = processors
            processors = [drafting]
        try:
            out = self._llm.create_chat_completion(
                messages=messages,
                temperature=0.0,
                max_tokens=self.max_tokens,
                logits_processor=llama_cpp.LogitsProcessorList(processors),
            )
        finally:
            check.close()
        if loop.looped:
            out["choices"][0]["message"]["content"] = before_loop(out, self._llm.detokenize(loop.block))
            out["choices"][0]["finish_reason"] = "looped"
        return out

    def drop_prefix_cache(self) -> None:
        """Keep no evaluated prompt states in RAM (up to PREFIX_CACHE_BYTES, plus their logits,
        per model). llama.cpp still reuses the prefix its context shares with the previous
        prompt, which is all a caller that sends related prompts in a row needs."""
        with self._lock:
            self._llm.set_cache(None)

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
            with self._lock, self._drafting() as drafting:
                self._use_threads()
                out = self._llm.create_chat_completion(
                    messages=messages,
                    temperature=0.0 if temperature is None else temperature,
                    max_tokens=self.max_tokens if max_tokens is None else max_tokens,
                    stop=list(stop) if stop else None,
                    logits_processor=None if drafting is None else [drafting],
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


class PerfCounters(NamedTuple):
    """llama.cpp's performance counters of a context, summed since it was created."""

    prompt_tokens: int  # prompt tokens computed (batches of more than one token; a 1-token suffix is generation)
    prompt_s: float  # wall seconds computing them
    decode_s: float  # wall seconds computing generated tokens (one at a time)


def perf_counters(llm: Any) -> PerfCounters:
    """`llm`'s counters now; zeros when they are not available."""
    try:
        llama_cpp = importlib.import_module("llama_cpp")
        perf = llama_cpp.llama_perf_context(llm._ctx.ctx)
        return PerfCounters(int(perf.n_p_eval), float(perf.t_p_eval_ms) / 1e3, float(perf.t_eval_ms) / 1e3)
    except (AttributeError, ImportError, TypeError, ValueError):
        return PerfCounters(0, 0.0, 0.0)


def reply_from_completion(out: Any) -> ChatReply:
    """The ChatReply of a llama-cpp-python chat completion; a cut-off or empty answer is an
    LLMError (its JSON would be incomplete)."""
    try:
        choice = out["choices"][0]
        content = choice["message"]["content"]
    except (KeyError, IndexError, TypeError) as exc:
        raise LLMError("local model failed", f"unexpected completion shape: {type(exc).__name__}") from exc
    cut_short = _CUT_SHORT.get(str(choice.get("finish_reason")), "")
    if not cut_short and (not content or not str(content).strip()):
        raise LLMError("malformed JSON", "empty answer")
    usage = out.get("usage") or {}
    return ChatReply(
        content=str(content or ""),
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        cut_short=cut_short,
    )


# finish_reason of an answer that stopped before its JSON closed ("looped": set by _complete_json).
_CUT_SHORT = {"length": "answer cut off", "looped": "answer looped"}


def before_loop(out: Any, block: bytes) -> str:
    """The answer of a completion that ends in `block` written three times (llm/loops.py), cut
    before the first copy; "" when its text does not end so (nothing of it is then kept)."""
    content = str(out["choices"][0]["message"]["content"] or "")
    copies = block.decode("utf-8", errors="replace") * COPIES
    return content[: -len(copies)] if copies and content.endswith(copies) else ""


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
