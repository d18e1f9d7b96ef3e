"""The `rules` LLM provider: deterministic code per task, no model, no network.

It lives with memory, not in llm/, because its "model" is the memory package's own
rule-based extractor and update agent; llm/ stays a library that imports no layer.
Registered as `egomem.memory.rules_provider:RulesProvider` (egomem.providers).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from egomem.llm.base import LLMError, LLMProvider
from egomem.memory.items import SessionText, UpdateInput
from egomem.memory.rules_extract import extract_rules
from egomem.memory.rules_update import decide_rules
from egomem.providers import BuildContext
from egomem.registry import ProviderConfig

T = TypeVar("T", bound=BaseModel)

_TASKS: dict[str, tuple[type[BaseModel], Callable[[Any], BaseModel]]] = {
    "extract": (SessionText, extract_rules),
    "update": (UpdateInput, decide_rules),
}


class RulesProvider(LLMProvider):
    name = "rules"

    def __init__(self) -> None:
        super().__init__()
        self._tasks = dict(_TASKS)

    @classmethod
    def from_config(cls, cfg: ProviderConfig, ctx: BuildContext) -> RulesProvider:
        return cls()

    def run(self, task: str, payload: BaseModel, schema: type[T]) -> T:
        if task not in self._tasks:
            raise LLMError("unknown task", f"the rules backend has no task {task!r}")
        in_type, fn = self._tasks[task]
        if not isinstance(payload, in_type):
            raise LLMError("wrong payload", f"task {task!r} takes {in_type.__name__}, got {type(payload).__name__}")
        self.usage.calls += 1
        out = fn(payload)
        # Same validation as a model's answer, so both backends honour one contract.
        return schema.model_validate(out.model_dump())
