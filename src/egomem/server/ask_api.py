"""`POST /api/v1/ask`: a question over the tenant's memory (retrieval/ask.py), per API key."""

from __future__ import annotations

import threading
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field

from egomem.config import Config
from egomem.llm.base import LLMProvider
from egomem.retrieval.ask import MAX_QUESTION_CHARS, Asker, build_llm
from egomem.retrieval.ask_types import AskResult
from egomem.retrieval.dense import EmbeddingCache
from egomem.retrieval.encoder import default_encoder
from egomem.retrieval.timex import parse_as_of
from egomem.server.deps import TenantContext, tenant_context

router = APIRouter(prefix="/api/v1", tags=["ask"])
Ctx = Annotated[TenantContext, Depends(tenant_context)]
_LLM_LOCK = threading.Lock()


class AskRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    user_id: str | None = Field(default=None, description="who asks: resolves 'my sister', 'I'")
    as_of: str | None = Field(default=None, description="only memory from before this ISO 8601 time or epoch s")
    llm: bool = Field(default=True, description="answer with the configured LLM (false: the best evidence itself)")


def answer_question(config: Config, ctx: TenantContext, body: AskRequest, llm: LLMProvider | None) -> AskResult:
    """One question over a tenant's store; the REST route and the MCP tool both call this."""
    cache: EmbeddingCache = ctx.cache(lambda: EmbeddingCache(default_encoder()))
    cutoff = parse_as_of(body.as_of) if body.as_of else None
    asker = Asker(ctx.store, cache, config.ask, llm if body.llm else None, admins=config.privacy.admins)
    return asker.ask(body.question, user_id=body.user_id, as_of=cutoff)


def shared_llm(holder: object, config: Config) -> LLMProvider | None:
    """The answer model, built once per process on first use and kept on `holder`."""
    with _LLM_LOCK:
        if not hasattr(holder, "ask_llm"):
            holder.ask_llm = build_llm(config)  # type: ignore[attr-defined]
        llm: LLMProvider | None = holder.ask_llm  # type: ignore[attr-defined]
        return llm


@router.post("/ask", response_model=AskResult)
def ask(body: AskRequest, ctx: Ctx, request: Request) -> AskResult:
    """Answer a question from memory: multi-round retrieval, evidence with sources, an answer
    from the configured LLM or the best evidence itself ("I have nothing about ..." when
    memory holds nothing on it). Reads only."""
    config: Config = request.app.state.config
    llm = shared_llm(request.app.state, config) if body.llm and config.ask.llm else None
    return answer_question(config, ctx, body, llm)
