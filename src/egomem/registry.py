"""Provider registries: backend name -> lazily imported class + its own typed config.

Every replaceable component (ASR, LLM, store, trigger, dialog model, and later
diarizer, face tracker, embedders) has one `Registry`. A provider is registered by
name with a dotted target (`"egomem.llm.local:LocalLLMProvider"`), so nothing heavy is
imported until that provider is actually built, and with a pydantic config model
(`extra="forbid"`) that validates its own settings. Third-party code adds a backend
with one call:

    from egomem.perception.asr import ASR_PROVIDERS
    ASR_PROVIDERS.register("vosk", "my_pkg.vosk_asr:VoskASR", VoskConfig, requires=("vosk",))

`available()` reports, without importing the providers, which ones are registered and
whether the packages they need are installed (for `egomem providers` and benchmarks).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationError

from egomem.errors import ConfigError

T = TypeVar("T")


class ProviderConfig(BaseModel):
    """Base of every provider's config: unknown keys are an error, not silently ignored.

    `provider` is the registered name the settings were validated for (one config model
    may serve several providers). `named` says whether the user chose that provider
    (in a file, a variable or code) or got the kind's default: only a default may be
    replaced by a fallback (see `egomem.providers.create`).
    """

    model_config = ConfigDict(extra="forbid")

    provider: str = ""
    _named: bool = PrivateAttr(default=True)

    @property
    def named(self) -> bool:
        return self._named


_BOUND_ATTRS = (("gt", True, True), ("ge", True, False), ("lt", False, True), ("le", False, False))
_BOUND_ERRORS = ("greater_than", "greater_than_equal", "less_than", "less_than_equal")


def error_message(model: type[BaseModel], error: Any) -> str:
    """One pydantic error as the config reports it: a value out of bounds names the range."""
    if error.get("type") == "extra_forbidden":
        parent: Any = model
        for part in error["loc"][:-1]:
            parent = getattr(parent, "model_fields", {}).get(part)
            parent = getattr(parent, "annotation", None)
        known = ", ".join(getattr(parent, "model_fields", {})) or "none"
        return f"no such setting (known here: {known})"
    bounds = value_range(model, error["loc"])
    if bounds and str(error.get("type")) in _BOUND_ERRORS:
        return f"{error['input']!r} is outside {bounds}"
    return str(error["msg"])


def value_range(model: type[BaseModel], loc: tuple[Any, ...] | list[Any]) -> str | None:
    """The allowed range of the numeric field at `loc` in `model`, written as an interval
    ("(0.0, 1.0]", ">= 1"), for error messages; None when the field has no bounds."""
    field_info = None
    node: Any = model
    for part in loc:
        fields = getattr(node, "model_fields", None)
        if not isinstance(part, str) or fields is None or part not in fields:
            return None
        field_info = fields[part]
        node = field_info.annotation
    if field_info is None:
        return None
    lo = hi = None
    lo_open = hi_open = False
    for m in field_info.metadata:
        for attr, is_low, is_open in _BOUND_ATTRS:
            bound = getattr(m, attr, None)
            if bound is None:
                continue
            if is_low:
                lo, lo_open = bound, is_open
            else:
                hi, hi_open = bound, is_open
    if lo is None and hi is None:
        return None
    if lo is None:
        return f"the range {'<' if hi_open else '<='} {hi}"
    if hi is None:
        return f"the range {'>' if lo_open else '>='} {lo}"
    return f"the range {'(' if lo_open else '['}{lo}, {hi}{')' if hi_open else ']'}"


class NoConfig(ProviderConfig):
    """For providers that take no settings."""


@dataclass(frozen=True)
class ProviderInfo:
    kind: str
    name: str
    target: str
    description: str
    requires: tuple[str, ...]
    missing: tuple[str, ...]  # required modules that are not importable here

    @property
    def installed(self) -> bool:
        return not self.missing


@dataclass
class _Entry:
    target: str
    config: type[ProviderConfig]
    requires: tuple[str, ...]
    description: str
    aliases: tuple[str, ...] = field(default_factory=tuple)


class Registry(Generic[T]):
    """Name -> (lazily imported class, config model). One instance per component kind."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, _Entry] = {}

    def register(
        self,
        name: str,
        target: str,
        config: type[ProviderConfig] = NoConfig,
        *,
        requires: tuple[str, ...] = (),
        description: str = "",
        replace: bool = False,
    ) -> None:
        """Add a provider. `target` is "package.module:Class"; `requires` lists the importable
        module names it needs (checked by `available()` without importing them)."""
        if ":" not in target:
            raise ValueError(f"{self.kind} provider target must be 'module:Class', got {target!r}")
        if name in self._entries and not replace:
            raise ValueError(f"{self.kind} provider {name!r} is already registered")
        self._entries[name] = _Entry(target, config, tuple(requires), description)

    def unregister(self, name: str) -> None:
        """Remove a provider (a plugin withdrawn, a test's mock); unknown names are a ConfigError."""
        self._entry(name)
        del self._entries[name]

    def names(self) -> list[str]:
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def _entry(self, name: str) -> _Entry:
        try:
            return self._entries[name]
        except KeyError as exc:
            known = ", ".join(self.names()) or "none"
            raise ConfigError(
                f"{self.kind}.provider: unknown {self.kind} provider {name!r}; registered: {known}"
            ) from exc

    def config_model(self, name: str) -> type[ProviderConfig]:
        return self._entry(name).config

    def parse_config(self, name: str, settings: dict[str, Any] | None = None, *, named: bool = True) -> ProviderConfig:
        """Validate `settings` against the provider's own config model. Every failure is a
        one-line ConfigError naming the key as it is written in the config (`asr.model`)."""
        model = self.config_model(name)
        try:
            cfg = model.model_validate({**(settings or {}), "provider": name})
        except ValidationError as exc:
            first = exc.errors()[0]
            key = ".".join([self.kind, *(str(x) for x in first["loc"])])
            if first["type"] == "extra_forbidden":
                known = ", ".join(f for f in model.model_fields if f != "provider") or "none"
                raise ConfigError(
                    f"{key} is not a setting of {self.kind} provider {name!r} (its settings: {known})"
                ) from exc
            msg = error_message(model, first)
            raise ConfigError(f"invalid config value {key} for {self.kind} provider {name!r}: {msg}") from exc
        cfg._named = named
        return cfg

    def load(self, name: str) -> type[T]:
        """Import and return the provider's class; a missing optional package is a ConfigError."""
        entry = self._entry(name)
        missing = self._missing(entry)
        if missing:
            raise ConfigError(f"{self.kind} provider {name!r} cannot be loaded: missing packages {', '.join(missing)}")
        module_name, _, attr = entry.target.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise ConfigError(f"{self.kind} provider {name!r} cannot be loaded: {exc}") from exc
        try:
            cls: type[T] = getattr(module, attr)
        except AttributeError as exc:
            raise ConfigError(f"{self.kind} provider {name!r}: {entry.target} does not exist") from exc
        return cls

    @staticmethod
    def _missing(entry: _Entry) -> tuple[str, ...]:
        out = []
        for mod in entry.requires:
            try:
                found = importlib.util.find_spec(mod) is not None
            except (ImportError, ValueError):
                found = False
            if not found:
                out.append(mod)
        return tuple(out)

    def info(self, name: str) -> ProviderInfo:
        e = self._entry(name)
        return ProviderInfo(self.kind, name, e.target, e.description, e.requires, self._missing(e))

    def available(self) -> list[ProviderInfo]:
        """Every registered provider with whether its packages are installed (nothing imported)."""
        return [self.info(n) for n in self.names()]


# Every registry, by component kind, for `egomem providers`. Registries add themselves here.
ALL: dict[str, Registry[Any]] = {}


def registry(kind: str) -> Registry[Any]:
    """The registry of one component kind, created on first use."""
    if kind not in ALL:
        ALL[kind] = Registry(kind)
    return ALL[kind]
