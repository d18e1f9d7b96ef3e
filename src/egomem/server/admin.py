"""The memory administration REST API (per tenant): users, facts, relations, episodes, search."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request
from pydantic import BaseModel, Field

from egomem.errors import InputError
from egomem.privacy.forget import facts_about
from egomem.retrieval.dense import EmbeddingCache
from egomem.retrieval.encoder import default_encoder
from egomem.retrieval.hybrid import search_episodes, search_user_memories
from egomem.schemas import ConsentEvent, DeletionReport, Episode, Fact, FactKind, Relation, Repair, Sensitivity, User
from egomem.server.deps import TenantContext, tenant_context
from egomem.store.db import MAX_ROW_ID

router = APIRouter(prefix="/api/v1", tags=["memory"])
Ctx = Annotated[TenantContext, Depends(tenant_context)]
# The store's row-id range at the interface: a number outside it is a 422 (the store would say "not found").
RowId = Annotated[int, Field(ge=1, le=MAX_ROW_ID)]


class Rename(BaseModel):
    name: str = Field(min_length=1, max_length=200)


class Merge(BaseModel):
    other_id: str = Field(description="this user is merged into the path's user and removed")


class Split(BaseModel):
    episodes: list[str] = Field(
        min_length=1, max_length=1000, description="episodes of the path's user that are another person's"
    )
    into: str | None = Field(default=None, description="give them to this existing user (default: a new one)")
    name: str | None = Field(default=None, max_length=200, description="the new person's name")
    keys: list[RowId] = Field(default_factory=list, max_length=1000, description="identity keys to move as well")


class NewFact(BaseModel):
    text: str = Field(min_length=1, max_length=2000)
    kind: FactKind = FactKind.FACT
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)


class Correction(BaseModel):
    text: str = Field(min_length=1, max_length=2000)


class NewRelation(BaseModel):
    relation: str = Field(min_length=1, max_length=100)
    object_id: str | None = None
    object_name: str | None = Field(default=None, max_length=200)


class Forget(BaseModel):
    topic: str = Field(
        min_length=1, max_length=200, description="forget the person's facts about this, with their history"
    )


class Forgotten(BaseModel):
    user_id: str
    topic: str
    facts: int


class SensitivityBody(BaseModel):
    sensitivity: Sensitivity


class UserSummary(BaseModel):
    user: User
    facts: int
    relations: int
    episodes: int


class SearchHit(BaseModel):
    kind: str
    score: float
    fact: Fact | None = None
    episode: Episode | None = None


@router.get("/users", response_model=list[UserSummary])
def list_users(ctx: Ctx) -> list[UserSummary]:
    s = ctx.store
    return [
        UserSummary(
            user=u,
            facts=len(s.list_facts(u.id)),
            relations=len(s.list_relations(u.id)),
            episodes=len(s.list_episodes(u.id)),
        )
        for u in s.list_users()
    ]


@router.get("/users/{user_id}", response_model=User)
def get_user(user_id: str, ctx: Ctx) -> User:
    return ctx.store.get_user(user_id)


@router.patch("/users/{user_id}", response_model=User)
def rename_user(user_id: str, body: Rename, ctx: Ctx) -> User:
    return ctx.store.rename_user(user_id, body.name, cause="api rename")


@router.post("/users/{user_id}/merge", response_model=User)
def merge_users(user_id: str, body: Merge, ctx: Ctx) -> User:
    """Merge `other_id` into this user (a repair: GET /repairs names it, POST /repairs/{id}/undo undoes it)."""
    return ctx.store.merge_users(user_id, body.other_id, cause="api merge")


@router.post("/users/{user_id}/split", response_model=Repair, status_code=201)
def split_user(user_id: str, body: Split, ctx: Ctx) -> Repair:
    """Give episodes of this user, and what was learnt from them (by provenance), to another person."""
    return ctx.store.split_user(
        user_id, body.episodes, into=body.into, name=body.name, key_ids=body.keys, cause="api split"
    )


@router.get("/repairs", response_model=list[Repair])
def list_repairs(ctx: Ctx, user_id: str | None = None) -> list[Repair]:
    """Merges and splits (of one user, or all), oldest first."""
    return ctx.store.list_repairs(user_id)


@router.post("/repairs/{repair_id}/undo", response_model=Repair)
def undo_repair(repair_id: Annotated[int, Path(ge=1, le=MAX_ROW_ID)], ctx: Ctx) -> Repair:
    """Put back every row the merge or split changed (409 when it was undone already or memory changed since)."""
    return ctx.store.undo_repair(repair_id, cause="api undo")


@router.delete("/users/{user_id}", response_model=DeletionReport)
def delete_user(user_id: str, ctx: Ctx) -> DeletionReport:
    return ctx.store.delete_user(user_id, cause="api delete")


@router.post("/users/{user_id}/forget", response_model=Forgotten)
def forget_topic(user_id: str, body: Forget, ctx: Ctx) -> Forgotten:
    """ "Forget what I said about X": the person's facts about the topic go, with their history."""
    ids = facts_about(ctx.store.list_facts(user_id, include_history=True), body.topic)
    if not ids:
        ctx.store.get_user(user_id)  # an unknown person is a 404, not "nothing about that"
    n = ctx.store.forget_facts(user_id, ids, cause="api forget a topic")
    return Forgotten(user_id=user_id, topic=body.topic, facts=n)


@router.get("/users/{user_id}/consent", response_model=list[ConsentEvent])
def consent_events(user_id: str, ctx: Ctx) -> list[ConsentEvent]:
    ctx.store.get_user(user_id)
    return ctx.store.consent_events(user_id)


@router.put("/facts/{fact_id}/sensitivity", response_model=Fact)
def set_sensitivity(fact_id: str, body: SensitivityBody, ctx: Ctx) -> Fact:
    return ctx.store.set_fact_sensitivity(fact_id, body.sensitivity, cause="api sensitivity override")


@router.get("/users/{user_id}/export")
def export_user(user_id: str, ctx: Ctx) -> dict[str, Any]:
    return ctx.store.export_user(user_id)


@router.get("/users/{user_id}/facts", response_model=list[Fact])
def list_facts(user_id: str, ctx: Ctx, history: bool = False) -> list[Fact]:
    ctx.store.get_user(user_id)
    return ctx.store.list_facts(user_id, include_history=history)


@router.post("/users/{user_id}/facts", response_model=Fact, status_code=201)
def add_fact(user_id: str, body: NewFact, ctx: Ctx) -> Fact:
    fact = Fact(user_id=user_id, text=body.text, kind=body.kind, confidence=body.confidence, source_text="(api)")
    return ctx.store.add_fact(fact, cause="api add")


@router.put("/facts/{fact_id}", response_model=Fact)
def correct_fact(fact_id: str, body: Correction, ctx: Ctx) -> Fact:
    """A correction supersedes the fact (the old text stays in its history)."""
    old = ctx.store.get_fact(fact_id)
    new = Fact(user_id=old.user_id, kind=old.kind, text=body.text, source_text="(api correction)")
    return ctx.store.supersede_fact(fact_id, new, cause="api correction")


@router.delete("/facts/{fact_id}", status_code=204)
def delete_fact(fact_id: str, ctx: Ctx) -> None:
    ctx.store.delete_fact(fact_id, cause="api delete")


@router.get("/users/{user_id}/relations", response_model=list[Relation])
def list_relations(user_id: str, ctx: Ctx, history: bool = False) -> list[Relation]:
    ctx.store.get_user(user_id)
    return ctx.store.list_relations(user_id, include_history=history)


@router.post("/users/{user_id}/relations", response_model=Relation, status_code=201)
def add_relation(user_id: str, body: NewRelation, ctx: Ctx) -> Relation:
    if (body.object_id is None) == (not body.object_name):
        raise InputError("give exactly one of object_id and object_name")
    rel = Relation(subject_id=user_id, relation=body.relation, object_id=body.object_id, object_name=body.object_name)
    return ctx.store.add_relation(rel, cause="api add")


@router.delete("/relations/{relation_id}", response_model=Relation)
def close_relation(relation_id: str, ctx: Ctx) -> Relation:
    """Ends the relation (kept in history with its validity closed)."""
    return ctx.store.close_relation(relation_id, cause="api close")


@router.get("/episodes", response_model=list[Episode])
def list_episodes(ctx: Ctx, user_id: str | None = None) -> list[Episode]:
    if user_id is not None:
        ctx.store.get_user(user_id)
    return ctx.store.list_episodes(user_id)


@router.get("/episodes/{episode_id}", response_model=Episode)
def get_episode(episode_id: str, ctx: Ctx) -> Episode:
    return ctx.store.get_episode(episode_id)


@router.get("/search", response_model=list[SearchHit])
def search(
    ctx: Ctx,
    request: Request,
    q: Annotated[str, Query(min_length=1, max_length=1000)],
    user_id: str | None = None,
    k: Annotated[int, Query(ge=1, le=50)] = 5,
) -> list[SearchHit]:
    """Hybrid (BM25 + dense) search over one user's facts, or over all episodes."""
    cache: EmbeddingCache = ctx.cache(lambda: EmbeddingCache(default_encoder()))
    if user_id is not None:
        ctx.store.get_user(user_id)
        return [
            SearchHit(kind="fact", score=s, fact=f) for f, s in search_user_memories(ctx.store, user_id, q, cache, k)
        ]
    return [SearchHit(kind="episode", score=s, episode=e) for e, s in search_episodes(ctx.store, q, cache, k)]
