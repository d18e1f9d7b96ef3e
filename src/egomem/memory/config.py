"""Settings of memory management (extraction, update, consolidation).

Meant as the `memory` section of egomem.config.Config (EGOMEM_MEMORY__*); until the
lead wires it in, callers pass a MemoryConfig explicitly (the defaults are the product's).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class MemoryConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Cosine (MiniLM) at or above which a new item repeats an existing fact (NOOP), and at
    # which consolidation merges two current facts. Set conservatively on the hand-made pairs
    # of tests/memory/test_duplicate_threshold.py (not on LoCoMo): a false merge loses a fact,
    # a missed one only repeats it, and the key slots (home, job, likes) are matched by rules.
    duplicate_cosine: float = Field(default=0.88, gt=0.0, le=1.0)
    similar_top_k: int = Field(default=3, ge=1)  # similar facts shown to the update task per item
    # Memory strength (MemoryBank-style forgetting curve), see memory/strength.py.
    stability_days: float = Field(default=7.0, gt=0.0)
    # Consolidation: dialog summaries kept one by one; older ones fold into a running summary.
    keep_recent_summaries: int = Field(default=5, ge=1)
    running_summary_max_words: int = Field(default=200, ge=20)
    # Retention policy: None keeps everything forever. A number purges current facts whose
    # strength fell below it (never summaries of the last keep_recent_summaries sessions).
    retention_min_strength: float | None = Field(default=None, ge=0.0, le=1.0)
