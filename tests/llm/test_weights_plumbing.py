"""Packaged-weights plumbing (egomem.weights) on small fake part packages in a tmp dir:
assembly is idempotent and atomic, a hash mismatch or a missing package is a clear
ConfigError, and nothing half-written is left behind. (The real models: test_local_llm.py,
tests/perception/test_whisper.py.)"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from egomem import weights
from egomem.errors import ConfigError

PARTS = [b"first part \x00\x01" * 50, b"second part" * 70]
JOINED = b"".join(PARTS)


def _fake_package(site: Path, dist: str, files: dict[str, bytes], version: str = "1.0.0") -> None:
    """A pip-installed package as importlib sees it: a module dir and its dist-info."""
    module = dist.replace("-", "_")
    (site / module / "data").mkdir(parents=True)
    (site / module / "__init__.py").write_text("")
    for rel, data in files.items():
        (site / module / rel).write_bytes(data)
    info = site / f"{module}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")


@pytest.fixture
def fake_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> weights.PackagedModel:
    site = tmp_path / "site"
    _fake_package(site, "fakeparts-one", {"data/part01.bin": PARTS[0], "data/side.txt": b"side"})
    _fake_package(site, "fakeparts-two", {"data/part02.bin": PARTS[1]})
    monkeypatch.syspath_prepend(str(site))
    model = weights.PackagedModel(
        "fake-model",
        "gguf",
        (
            weights.ModelFile(
                "fake.gguf",
                (
                    weights.Source("fakeparts-one", "fakeparts_one", "data/part01.bin"),
                    weights.Source("fakeparts-two", "fakeparts_two", "data/part02.bin"),
                ),
                hashlib.sha256(JOINED).hexdigest(),
                len(JOINED),
            ),
            weights.ModelFile("side.txt", (weights.Source("fakeparts-one", "fakeparts_one", "data/side.txt"),)),
        ),
        entry="fake.gguf",
    )
    monkeypatch.setitem(weights.MODELS, model.name, model)
    return model


def test_plumbing_assembly_is_verified_and_idempotent(fake_model: weights.PackagedModel, tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert not weights.is_ready("fake-model", data)
    path = weights.ensure("fake-model", data)
    assert path == data / "models" / "fake-model" / "fake.gguf" and path.read_bytes() == JOINED
    assert (path.parent / "side.txt").read_bytes() == b"side"
    assert weights.is_ready("fake-model", data) and weights.verify("fake-model", data) == []
    mtime = path.stat().st_mtime_ns
    assert weights.ensure("fake-model", data) == path and path.stat().st_mtime_ns == mtime  # not rewritten
    weights.install("fake-model", data, force=True)
    assert path.read_bytes() == JOINED
    assert sorted(p.name for p in path.parent.iterdir()) == [weights.STAMP, "fake.gguf", "side.txt"]


def test_plumbing_hash_mismatch_is_an_error_and_leaves_no_file(
    fake_model: weights.PackagedModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    bad = weights.ModelFile(fake_model.files[0].name, fake_model.files[0].sources, "0" * 64, len(JOINED))
    monkeypatch.setitem(
        weights.MODELS, "fake-model", weights.PackagedModel("fake-model", "gguf", (bad,), entry="fake.gguf")
    )
    with pytest.raises(ConfigError, match=r"sha256 of fake.gguf .* reinstall fakeparts-one"):
        weights.ensure("fake-model", data)
    assert [p.name for p in (data / "models" / "fake-model").iterdir()] == []  # no half file, no stamp


def test_plumbing_corrupt_assembled_file_is_found_and_replaced(
    fake_model: weights.PackagedModel, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    path = weights.ensure("fake-model", data)
    path.write_bytes(b"x" * len(JOINED))  # same size: only a full re-hash sees it
    assert weights.verify("fake-model", data) == ["fake.gguf: sha256 mismatch"]
    path.write_bytes(JOINED[:10])  # a truncated file fails the cheap check and is re-assembled
    assert not weights.is_ready("fake-model", data)
    assert weights.ensure("fake-model", data).read_bytes() == JOINED


def test_plumbing_missing_package_names_it(fake_model: weights.PackagedModel, tmp_path: Path) -> None:
    src = fake_model.files[0].sources
    gone = weights.Source("fakeparts-three", "fakeparts_three", "data/part03.bin")
    model = weights.PackagedModel(
        "fake-model", "gguf", (weights.ModelFile("fake.gguf", (*src, gone)),), entry="fake.gguf"
    )
    weights.MODELS["fake-model"] = model  # restored by the fixture's monkeypatch
    assert weights.missing_packages(model) == ["fakeparts-three"]
    with pytest.raises(ConfigError, match=r"needs the pip package fakeparts-three: run `make install`"):
        weights.ensure("fake-model", tmp_path / "data")
    with pytest.raises(ConfigError, match="unknown packaged model"):
        weights.get("no-such-model")
