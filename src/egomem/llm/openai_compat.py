"""Any OpenAI-compatible chat endpoint (DeepSeek, vLLM, Ollama, llama.cpp server) over httpx.

Output is constrained with `response_format = {"type": "json_schema", ...}`; servers that
ignore it still get validated by the caller. Transient failures (connection refused,
timeouts, HTTP 408/409/429/5xx) are retried with exponential backoff; anything else
fails at once. Every failure is an LLMError with a short reason.
"""

from __future__ import annotations

import os
import re
import time
from typing import Any

import httpx

from egomem.errors import ConfigError
from egomem.llm.base import ChatProvider, ChatReply, LLMError, PromptTooLong
from egomem.providers import BuildContext, OpenAILLMConfig

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}
# How servers refuse a prompt longer than their context: OpenAI ("context_length_exceeded"),
# vLLM ("maximum context length is"), llama.cpp's server ("exceeds the available context size").
_CONTEXT_FULL = re.compile(r"context_length_exceeded|maximum context length|exceeds? the available context", re.I)


class OpenAICompatProvider(ChatProvider):
    name = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 30.0,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        temperature: float = 0.0,
        max_tokens: int = 2048,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__()
        if not base_url:
            raise ConfigError("llm.base_url is required for the openai provider (e.g. http://127.0.0.1:8000/v1)")
        if not model:
            raise ConfigError("llm.model is required for the openai provider")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.temperature = temperature
        self.max_tokens = max_tokens
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout_s, headers=headers, transport=transport)

    @classmethod
    def from_config(cls, cfg: OpenAILLMConfig, ctx: BuildContext | None = None) -> OpenAICompatProvider:
        return cls(
            cfg.base_url,
            cfg.model,
            api_key=os.environ.get(cfg.api_key_env) or None,
            timeout_s=cfg.timeout_s,
            max_retries=cfg.max_retries,
        )

    def close(self) -> None:
        self._client.close()

    def chat(self, messages: list[dict[str, str]], json_schema: dict[str, Any], schema_name: str) -> ChatReply:
        body = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": json_schema, "strict": False},
            },
        }
        return self._post(body)

    def complete(
        self,
        messages: list[dict[str, str]],
        *,
        stop: list[str] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> ChatReply:
        """One free-text completion (the cascaded dialog model), with optional stop sequences.

        Same request, retry, timeout and error path as `chat`; counted in `usage` like a task.
        OpenAI-compatible servers leave the stop sequence itself out of the reply."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature if temperature is None else temperature,
            "max_tokens": self.max_tokens if max_tokens is None else max_tokens,
        }
        if stop:
            body["stop"] = list(stop)
        self.usage.calls += 1
        try:
            reply = self._post(body)
        except LLMError:
            self.usage.failures += 1
            raise
        self.usage.prompt_tokens += reply.prompt_tokens
        self.usage.completion_tokens += reply.completion_tokens
        return reply

    def _post(self, body: dict[str, Any]) -> ChatReply:
        """POST one chat completion with retries on transient failures; LLMError otherwise."""
        last = LLMError("endpoint failed")
        for attempt in range(self.max_retries + 1):
            if attempt:
                self.usage.retries += 1
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                resp = self._client.post(self.url, json=body)
            except httpx.TimeoutException as exc:
                last = LLMError("endpoint timeout", type(exc).__name__)
                continue
            except httpx.TransportError as exc:  # refused, reset, DNS: the endpoint is down
                last = LLMError("endpoint unreachable", f"{type(exc).__name__}: {exc}")
                continue
            if resp.status_code in RETRY_STATUS:
                last = LLMError(f"endpoint HTTP {resp.status_code}", resp.text[:200])
                continue
            if resp.status_code != 200:
                if resp.status_code in (400, 413) and _CONTEXT_FULL.search(resp.text):
                    raise PromptTooLong(resp.text[:200])
                raise LLMError(f"endpoint HTTP {resp.status_code}", resp.text[:200])
            return _reply(resp)
        raise LLMError(last.reason, f"{last.detail} (after {self.max_retries + 1} attempts)")


def _reply(resp: httpx.Response) -> ChatReply:
    try:
        data = resp.json()
        choice = data["choices"][0]
        content = choice["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise LLMError("malformed chat response", resp.text[:200]) from exc
    if not isinstance(content, str):
        raise LLMError("malformed chat response", "message content is not a string")
    usage = data.get("usage") or {}
    return ChatReply(
        content=content,
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        # A server that ran out of tokens stops mid-JSON: its complete items may stand, as the
        # local model's do (ChatProvider.run, PREFIX_IS_ANSWER).
        cut_short="answer cut off" if choice.get("finish_reason") == "length" else "",
    )
