"""The EGOMEM_* environment: configuration (EGOMEM_<SECTION>__<KEY>) apart from the process
variables (config.PROCESS_VARIABLES), each of which must leave every command working."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from egomem import config as config_module
from egomem.cli.main import cli
from egomem.config import PROCESS_PREFIXES, PROCESS_VARIABLES, Config, load_config
from egomem.errors import ConfigError
from egomem.registry import ALL as ALL_REGISTRIES

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", ROOT / "DEVELOPERS.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _value_for(name: str, tmp_path: Path) -> str:
    if name == "EGOMEM_CONFIG":
        f = tmp_path / "egomem.toml"
        f.write_text("[retrieval]\ntop_k = 4\n")
        return str(f)
    if name in ("EGOMEM_DATA_DIR", "EGOMEM_BENCH_DATA", "EGOMEM_PG_DIR", "EGOMEM_PG_BIN"):
        return str(tmp_path / name.lower())
    return "egm_not_a_config_value"  # keys, names, ports: any text


@pytest.mark.parametrize("name", [*PROCESS_VARIABLES, "EGOMEM_TEST_PG_DSN"])
def test_each_process_variable_leaves_users_list_working(
    name: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    env = {name: _value_for(name, tmp_path)}
    if name != "EGOMEM_DATA_DIR":
        env["EGOMEM_DATA_DIR"] = str(tmp_path / "data")
    with caplog.at_level(logging.WARNING, logger="egomem.config"):
        result = CliRunner().invoke(cli, ["users", "list"], env=env)
    assert result.exception is None, result.output
    assert result.exit_code == 0 and "no users in the store" in result.output
    assert not [r for r in caplog.records if name in r.getMessage()]  # no warning about a known variable


def test_data_dir_and_config_variables_take_effect(tmp_path: Path) -> None:
    env = {"EGOMEM_DATA_DIR": str(tmp_path / "d"), "EGOMEM_CONFIG": _value_for("EGOMEM_CONFIG", tmp_path)}
    cfg = load_config(environ=env)
    assert cfg.data_dir == tmp_path / "d" and cfg.retrieval.top_k == 4
    # The key variables are not configuration: they are left for the code that reads them.
    cfg = load_config(environ={**env, "EGOMEM_API_KEY": "egm_x", "EGOMEM_BENCH_DATA": "/nowhere"})
    assert "api_key" not in cfg.model_dump() and "bench_data" not in cfg.model_dump()


def test_unknown_variable_is_one_warning_naming_the_known_ones(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(config_module, "_warned", set())
    env = {"EGOMEM_DATA_DIR": str(tmp_path), "EGOMEM_THRESHOLD": "0.5"}
    with caplog.at_level(logging.WARNING, logger="egomem.config"):
        cfg = load_config(environ=env)
        load_config(environ=env)  # once per process, not per load
    assert cfg.face.threshold == FaceDefault.threshold  # ignored
    lines = [r.getMessage() for r in caplog.records if "EGOMEM_THRESHOLD" in r.getMessage()]
    assert len(lines) == 1 and "\n" not in lines[0]
    assert "EGOMEM_<SECTION>__<KEY>" in lines[0] and all(v in lines[0] for v in PROCESS_VARIABLES)


def test_key_variable_named_by_the_config_is_known(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(config_module, "_warned", set())
    env = {
        "EGOMEM_DATA_DIR": str(tmp_path),
        "EGOMEM_LLM__PROVIDER": "openai",
        "EGOMEM_LLM__API_KEY_ENV": "EGOMEM_MY_ENDPOINT_KEY",
        "EGOMEM_MY_ENDPOINT_KEY": "sk-x",
    }
    with caplog.at_level(logging.WARNING, logger="egomem.config"):
        load_config(environ=env)
    assert not [r for r in caplog.records if "EGOMEM_MY_ENDPOINT_KEY" in r.getMessage()]


@pytest.mark.parametrize(
    ("env", "match"),
    [
        ({"EGOMEM_FACE__THRESHOLD": "5"}, r"face\.threshold \(from EGOMEM_FACE__THRESHOLD\): 5 is outside the range"),
        ({"EGOMEM_FACE__THRESOLD": "0.5"}, r"face\.thresold .*no such setting \(known here: threshold"),
        ({"EGOMEM_VOICE__VAD_THRESHOLD": "1.5"}, r"voice\.vad_threshold .*outside the range \(0\.0, 1\.0\)"),
        ({"EGOMEM_MEMORY__DUPLICATE_COSINE": "2"}, r"outside the range \(0\.0, 1\.0\]"),
        ({"EGOMEM_RUNTIME__VIDEO_FPS": "0"}, r"runtime\.video_fps .*outside the range \(0\.0, 30\.0\]"),
        ({"EGOMEM_RETRIEVAL__POLL_INTERVAL_S": "-1"}, r"outside the range > 0\.0"),
        ({"EGOMEM_TTS__PROVIDER": "tone", "EGOMEM_TTS__LEVEL": "3"}, r"tts\.level .*outside the range \(0\.0, 1\.0\]"),
    ],
)
def test_values_outside_their_range_name_the_range(env: dict[str, str], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        load_config(environ=env)


def test_face_threshold_toml_range(tmp_path: Path) -> None:
    f = tmp_path / "c.toml"
    f.write_text("[face]\nthreshold = 5\n")
    with pytest.raises(ConfigError, match=r"face\.threshold: 5 is outside the range \(0\.0, 1\.0\)"):
        load_config(f, environ={})


def _doc_variables() -> set[str]:
    names: set[str] = set()
    for doc in DOCS:
        names |= set(re.findall(r"EGOMEM_[A-Z0-9_]*[A-Z0-9_]", doc.read_text(encoding="utf-8")))
    # docs/configuration.md's examples of what is unknown or misspelled
    return names - {"EGOMEM_FOO", "EGOMEM_THRESHOLD", "EGOMEM_MY_KEY", "EGOMEM_FACE__THRESOLD"}


def test_every_variable_in_the_docs_is_known() -> None:
    """No EGOMEM_* variable the docs name is one the code would ignore or refuse."""
    names = _doc_variables()
    assert "EGOMEM_API_KEY" in names and "EGOMEM_BENCH_DATA" in names  # the scan finds them
    for name in names:
        if "__" not in name:
            assert name in PROCESS_VARIABLES or name.startswith(PROCESS_PREFIXES), name
            continue
        section, key = name[len("EGOMEM_") :].lower().split("__", 1)
        assert section in Config.model_fields, name
        if not key:  # a section's prefix, "EGOMEM_ASK__*"
            continue
        if section in ALL_REGISTRIES:
            reg = ALL_REGISTRIES[section]
            keys = {k for p in reg.names() for k in reg.config_model(p).model_fields}
        else:
            keys = set(Config.model_fields[section].annotation.model_fields)  # type: ignore[union-attr]
        assert key in keys, name


def test_configuration_doc_lists_every_process_variable() -> None:
    doc = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    for name in PROCESS_VARIABLES:
        assert f"| `{name}` |" in doc, name


class FaceDefault:
    threshold = Config().face.threshold
