"""Clusters to enrolled users: the caller supplies the identity layer's voice-key lookup."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

VoiceLookup = Callable[[np.ndarray], "tuple[str, float] | None"]


def map_to_users(centroids: np.ndarray, lookup: VoiceLookup) -> dict[int, str]:
    """Cluster index -> enrolled user id for every cluster whose centroid `lookup` recognises
    ((user_id, score), or None below its threshold). Perception does not import identity: the
    runtime wires e.g. the PersonIdentifier's voice match in. Several clusters recognised as one
    user all map to that user: enrolled people are recognised, not re-clustered."""
    out: dict[int, str] = {}
    for i, c in enumerate(np.asarray(centroids)):
        if c.size == 0:
            continue
        hit = lookup(c)
        if hit is not None:
            out[i] = hit[0]
    return out
