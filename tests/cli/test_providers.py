"""Provider sections in the config, the one build path with its fallback policy, and
`egomem providers`. The fallback tests use plumbing mocks (named as such) registered
as the default ASR provider: what is tested is the policy, not any backend."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from egomem import providers
from egomem.config import load_config
from egomem.errors import ConfigError
from egomem.perception.asr import PocketSphinxASR
from egomem.providers import BuildContext, OpenAILLMConfig, PostgresStoreConfig, WhisperConfig, create, section
from egomem.registry import ProviderConfig, registry


def test_provider_sections_from_env_and_toml(tmp_path: Path) -> None:
    env = {
        "EGOMEM_LLM__PROVIDER": "openai",
        "EGOMEM_LLM__BASE_URL": "http://127.0.0.1:9/v1",
        "EGOMEM_ASR__MODEL": "tiny.en",
        "EGOMEM_STORE__PROVIDER": "postgres",
        "EGOMEM_STORE__DSN": "postgresql://u@h/db",
    }
    cfg = load_config(environ=env)
    assert isinstance(cfg.llm, OpenAILLMConfig) and cfg.llm.base_url == "http://127.0.0.1:9/v1" and cfg.llm.named
    assert isinstance(cfg.asr, WhisperConfig) and cfg.asr.model == "tiny.en" and not cfg.asr.named
    assert isinstance(cfg.store, PostgresStoreConfig) and cfg.store.dsn == "postgresql://u@h/db"
    f = tmp_path / "c.toml"
    f.write_text('[asr]\nprovider = "pocketsphinx"\n[trigger]\nprovider = "rules"\n')
    cfg = load_config(f, environ={})
    assert (cfg.asr.provider, cfg.trigger.provider, cfg.dialog.provider) == ("pocketsphinx", "rules", "template")
    assert cfg.model_dump()["asr"] == {"provider": "pocketsphinx"}


@pytest.mark.parametrize(
    ("env", "match"),
    [
        ({"EGOMEM_STORE__DSN": "postgresql://u@h/db"}, r"^store\.dsn is not a setting of store provider 'sqlite'"),
        ({"EGOMEM_ASR__PROVIDER": "pocketsphinx", "EGOMEM_ASR__MODEL": "base"}, r"^asr\.model is not a setting"),
        ({"EGOMEM_ASR__PROVIDER": "kaldi"}, r"^asr\.provider: unknown asr provider 'kaldi'"),
        ({"EGOMEM_ASR__BEAM_SIZE": "99"}, r"^invalid config value asr\.beam_size"),
        ({"EGOMEM_STORE__BACKEND": "postgres"}, r"^store\.backend has moved: set store\.provider$"),
        ({"EGOMEM_RUNTIME__ASR": "pocketsphinx"}, r"^runtime\.asr has moved: set asr\.provider$"),
        ({"EGOMEM_RUNTIME__DIALOG": "openai"}, r"^runtime\.dialog has moved: set dialog\.provider"),
        ({"EGOMEM_RUNTIME__TRIGGER": "rules"}, r"^runtime\.trigger has moved: set trigger\.provider$"),
        ({"EGOMEM_LLM__GGUF_PATH": "/m.gguf"}, r"^llm\.gguf_path has moved: set llm\.model"),
    ],
)
def test_bad_or_moved_provider_keys_are_one_line_errors(env: dict[str, str], match: str) -> None:
    with pytest.raises(ConfigError, match=match) as e:
        load_config(environ=env)
    assert "\n" not in str(e.value)


class MockThirdPartyConfig(ProviderConfig):
    language: str = "en"


def test_a_third_party_provider_registered_before_load_config_is_valid(monkeypatch: pytest.MonkeyPatch) -> None:
    asr = registry("asr")
    asr.register("mock-vosk", "egomem_mock_plugin:MockASR", MockThirdPartyConfig, description="plumbing mock")
    try:
        cfg = load_config(environ={"EGOMEM_ASR__PROVIDER": "mock-vosk", "EGOMEM_ASR__LANGUAGE": "de"})
        assert isinstance(cfg.asr, MockThirdPartyConfig) and cfg.asr.language == "de"
        with pytest.raises(ConfigError, match=r"^asr\.model is not a setting of asr provider 'mock-vosk'"):
            load_config(environ={"EGOMEM_ASR__PROVIDER": "mock-vosk", "EGOMEM_ASR__MODEL": "x"})
    finally:
        asr.unregister("mock-vosk")
    with pytest.raises(ConfigError, match="unknown asr provider 'mock-vosk'"):
        load_config(environ={"EGOMEM_ASR__PROVIDER": "mock-vosk"})


class MockASRWithoutModelFiles:
    """Plumbing mock: a provider whose model files are absent."""

    @classmethod
    def from_config(cls, cfg: ProviderConfig, ctx: BuildContext) -> MockASRWithoutModelFiles:
        raise ConfigError("mock model files are absent")


@pytest.fixture
def mock_default_asr(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Two plumbing mocks registered as ASR providers; the first is made the kind's default."""
    module = types.ModuleType("egomem_mock_asr")
    module.MockASRWithoutModelFiles = MockASRWithoutModelFiles  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "egomem_mock_asr", module)
    asr = registry("asr")
    asr.register("mock-no-model", "egomem_mock_asr:MockASRWithoutModelFiles", description="plumbing mock")
    asr.register("mock-no-package", "egomem_mock_asr:Nothing", requires=("egomem_no_such_package",))
    monkeypatch.setitem(providers.DEFAULTS, "asr", "mock-no-model")
    yield "mock-no-model"
    asr.unregister("mock-no-model")
    asr.unregister("mock-no-package")


def test_a_default_provider_that_cannot_run_falls_back_with_one_notice(
    mock_default_asr: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ctx = BuildContext(tmp_path)
    with caplog.at_level(logging.WARNING, logger="egomem.providers"):
        built = create("asr", section("asr"), ctx)  # the default, not named by the user: model files absent
    assert isinstance(built, PocketSphinxASR)
    [notice] = caplog.messages
    assert "mock-no-model" in notice and "mock model files are absent" in notice and "'pocketsphinx'" in notice
    monkeypatch.setitem(providers.DEFAULTS, "asr", "mock-no-package")
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="egomem.providers"):
        assert isinstance(create("asr", section("asr"), ctx), PocketSphinxASR)  # packages missing: not imported
    assert "missing packages: egomem_no_such_package" in caplog.messages[0]


def test_a_provider_the_user_named_fails_with_its_own_error(mock_default_asr: str, tmp_path: Path) -> None:
    cfg = load_config(environ={"EGOMEM_ASR__PROVIDER": mock_default_asr})
    assert cfg.asr.named
    with pytest.raises(ConfigError, match="mock model files are absent"):
        create("asr", cfg.asr, BuildContext(tmp_path))
    with pytest.raises(ConfigError, match="cannot be loaded"):
        create("asr", section("asr", {"provider": "mock-no-package"}), BuildContext(tmp_path))


def _egomem(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "egomem.cli.main", *args], capture_output=True, text=True)


def test_providers_command_lists_every_kind() -> None:
    r = _egomem("providers", "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    by_kind: dict[str, set[str]] = {}
    for row in rows:
        by_kind.setdefault(row["kind"], set()).add(row["provider"])
        assert row["installed"] == (not row["missing"]) and row["description"]
    assert by_kind["asr"] >= {"pocketsphinx", "faster-whisper"} and by_kind["llm"] >= {"rules", "openai", "local"}
    assert by_kind["trigger"] == {"model", "rules"} and by_kind["dialog"] >= {"template", "openai"}
    assert by_kind["store"] >= {"sqlite", "postgres"}
    defaults = {(row["kind"], row["provider"]) for row in rows if row["default"]}
    assert defaults == set(providers.DEFAULTS.items())
    text = _egomem("providers")
    assert text.returncode == 0 and "pocketsphinx" in text.stdout and "fallback" in text.stdout
