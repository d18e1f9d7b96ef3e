"""Clustering window embeddings: average-linkage AHC or spectral with an eigengap count."""

from __future__ import annotations

import numpy as np

from egomem.errors import InputError


def cluster(vectors: np.ndarray, method: str, threshold: float, max_speakers: int = 8) -> np.ndarray:
    """Cluster labels 0..k-1 (in order of first appearance) of L2-normalised row vectors."""
    n = vectors.shape[0]
    if method not in ("ahc", "spectral", "single"):
        raise InputError(f"unknown clustering method {method!r} (ahc, spectral, single)")
    if n <= 1 or method == "single":
        return np.zeros(n, dtype=int)
    labels = ahc(vectors, threshold) if method == "ahc" else spectral(vectors, threshold, max_speakers)
    return relabel(labels)


def ahc(vectors: np.ndarray, threshold: float) -> np.ndarray:
    """Average linkage on cosine distance, cut at `threshold`."""
    from scipy.cluster.hierarchy import fcluster, linkage

    z = linkage(vectors.astype(np.float64), method="average", metric="cosine")
    return np.asarray(fcluster(z, t=threshold, criterion="distance")) - 1


def spectral(vectors: np.ndarray, keep_fraction: float, max_speakers: int) -> np.ndarray:
    """Spectral clustering on a pruned cosine affinity (each row keeps its top `keep_fraction`),
    with the speaker count at the largest eigengap of the normalised Laplacian."""
    from scipy.linalg import eigh
    from sklearn.cluster import KMeans

    n = vectors.shape[0]
    sim = np.clip(vectors @ vectors.T, -1.0, 1.0)
    np.fill_diagonal(sim, 1.0)
    keep = max(2, int(np.ceil(keep_fraction * n)))
    idx = np.argsort(-sim, axis=1)[:, :keep]
    rows = np.arange(n)[:, None]
    aff = np.zeros_like(sim)
    aff[rows, idx] = sim[rows, idx]
    aff = np.maximum(0.5 * (aff + aff.T), 0.0)
    d = 1.0 / np.sqrt(np.maximum(aff.sum(axis=1), 1e-10))
    vals, vecs = eigh(np.eye(n) - d[:, None] * aff * d[None, :])
    kmax = min(max_speakers, n - 1)
    k = int(np.argmax(np.diff(vals[: kmax + 1]))) + 1 if kmax >= 2 else 1
    if k == 1:
        return np.zeros(n, dtype=int)
    emb = vecs[:, :k] / np.maximum(np.linalg.norm(vecs[:, :k], axis=1, keepdims=True), 1e-10)
    return np.asarray(KMeans(n_clusters=k, n_init=10, random_state=0).fit_predict(emb))


def relabel(labels: np.ndarray) -> np.ndarray:
    """Labels renumbered 0.. in order of first appearance."""
    order: dict[int, int] = {}
    for x in labels.tolist():
        order.setdefault(int(x), len(order))
    return np.array([order[int(x)] for x in labels.tolist()], dtype=int)


def centroids(vectors: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """(k, dim) L2-normalised mean of each cluster's vectors."""
    k = int(labels.max()) + 1 if labels.size else 0
    if k == 0:
        return np.zeros((0, vectors.shape[1]), np.float32)
    c = np.stack([vectors[labels == i].mean(axis=0) for i in range(k)])
    return (c / np.maximum(np.linalg.norm(c, axis=1, keepdims=True), 1e-10)).astype(np.float32)


def fold_small_clusters(
    labels: np.ndarray, vectors: np.ndarray, spans: list[tuple[float, float]], min_s: float
) -> np.ndarray:
    """Clusters whose windows cover less than `min_s` seconds join the most similar larger one."""
    if min_s <= 0 or labels.size == 0:
        return labels
    covered = {k: union_length([spans[i] for i in np.flatnonzero(labels == k)]) for k in set(labels.tolist())}
    big = [k for k, v in covered.items() if v >= min_s] or [max(covered, key=lambda k: covered[k])]
    cents = centroids(vectors, labels)
    out = labels.copy()
    for k in covered:
        if k not in big:
            out[labels == k] = big[int(np.argmax([float(cents[k] @ cents[b]) for b in big]))]
    return relabel(out)


def union_length(spans: list[tuple[float, float]]) -> float:
    total, cur_s, cur_e = 0.0, 0.0, -np.inf
    for s, e in sorted(spans):
        if s > cur_e:
            total += max(cur_e - cur_s, 0.0)
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    return total + max(cur_e - cur_s, 0.0)
