"""The one table of embedding encoders: name -> modality, dimension, metric, index kind.

Perception, the store (SQLite checks, PostgreSQL columns and HNSW indexes), migrations
and benchmarks read dimensions and metrics from here; nothing else spells them. A new
face or voice encoder is one `register_encoder` call (plus, for PostgreSQL, the
migration that adds its index, which reads the same entry).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from egomem.errors import DimensionError, InputError
from egomem.schemas import Modality

Metric = Literal["l2", "cosine"]
IndexKind = Literal["hnsw", "exact"]


@dataclass(frozen=True)
class EncoderSpec:
    name: str  # stored with every key (identity_keys.model)
    modality: Modality
    dim: int
    metric: Metric  # how two vectors of this encoder are compared; lower distance is closer
    index: IndexKind = "hnsw"  # PostgreSQL: a partial HNSW index over this encoder's keys

    @property
    def pg_opclass(self) -> str:
        return "vector_l2_ops" if self.metric == "l2" else "vector_cosine_ops"

    @property
    def pg_operator(self) -> str:
        return "<->" if self.metric == "l2" else "<=>"


_ENCODERS: dict[str, EncoderSpec] = {}
# The encoder each modality uses unless told otherwise.
_DEFAULT: dict[Modality, str] = {}


def register_encoder(spec: EncoderSpec, *, default: bool = False) -> EncoderSpec:
    old = _ENCODERS.get(spec.name)
    if old is not None and old != spec:
        raise ValueError(f"encoder {spec.name!r} is already registered with another shape: {old}")
    _ENCODERS[spec.name] = spec
    if default:
        _DEFAULT[spec.modality] = spec.name
    return spec


def encoder(name: str) -> EncoderSpec:
    try:
        return _ENCODERS[name]
    except KeyError as exc:
        raise InputError(f"unknown encoder {name!r}; known: {', '.join(sorted(_ENCODERS))}") from exc


def known(name: str) -> bool:
    return name in _ENCODERS


def all_encoders() -> list[EncoderSpec]:
    return [_ENCODERS[n] for n in sorted(_ENCODERS)]


def default_encoder(modality: Modality) -> EncoderSpec:
    return _ENCODERS[_DEFAULT[modality]]


def check_dim(name: str, dim: int) -> None:
    """A vector of the wrong size for a known encoder is refused before it reaches a database."""
    spec = _ENCODERS.get(name)
    if spec is not None and spec.dim != dim:
        raise DimensionError(f"{name} vectors have {spec.dim} dimensions, got {dim}")


# dlib's 128-d ResNet face descriptor: same person when L2 distance < ~0.6.
DLIB_FACE = register_encoder(EncoderSpec("dlib_resnet_v1", Modality.FACE, 128, "l2"), default=True)
# resemblyzer's 256-d GE2E speaker embedding, L2-normalised: compared by cosine.
RESEMBLYZER_VOICE = register_encoder(EncoderSpec("resemblyzer", Modality.VOICE, 256, "cosine"), default=True)
