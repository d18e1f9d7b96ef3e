from __future__ import annotations

from pathlib import Path

import pytest

from egomem.config import load_config
from egomem.errors import ConfigError


def test_defaults_need_nothing(tmp_path: Path) -> None:
    cfg = load_config(environ={"XDG_DATA_HOME": str(tmp_path)})
    assert cfg.data_dir == tmp_path / "egomem"
    assert cfg.store.provider == "sqlite" and cfg.retrieval.level1_budget_tokens == 512


def test_toml_then_env_override(tmp_path: Path) -> None:
    f = tmp_path / "c.toml"
    f.write_text('data_dir = "/x"\n[face]\nthreshold = 0.5\n[retrieval]\ntop_k = 3\n')
    cfg = load_config(f, environ={"EGOMEM_FACE__THRESHOLD": "0.55", "EGOMEM_LLM__PROVIDER": "openai"})
    assert cfg.face.threshold == 0.55 and cfg.retrieval.top_k == 3
    assert cfg.llm.provider == "openai" and str(cfg.data_dir) == "/x"
    assert load_config(f, data_dir=tmp_path, environ={}).data_dir == tmp_path


@pytest.mark.parametrize(
    ("text", "env", "match"),
    [
        ("[face\nthreshold=1", {}, "malformed TOML"),
        ("[face]\nthreshold = -1\n", {}, "face.threshold"),
        ("[nosuch]\nx = 1\n", {}, "nosuch"),
        ("", {"EGOMEM_RETRIEVAL__TOP_K": "many"}, "retrieval.top_k"),
    ],
)
def test_bad_config_is_one_clear_error(tmp_path: Path, text: str, env: dict[str, str], match: str) -> None:
    f = tmp_path / "c.toml"
    f.write_text(text)
    with pytest.raises(ConfigError, match=match):
        load_config(f, environ=env)


def test_missing_config_file() -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_config("/nonexistent/egomem.toml", environ={})
