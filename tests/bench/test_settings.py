"""`--set config=` / xcost rows: settings of the product's configuration a benchmark runs with."""

from __future__ import annotations

import pytest

from egomem.bench import BenchOptions, parse_settings, settings_environ
from egomem.bench.realtime import run as run_realtime
from egomem.bench.xcost import config_of, parse_rows
from egomem.errors import InputError


def test_settings_parse_into_the_variables_the_config_reads() -> None:
    settings = parse_settings("llm.n_threads=1, memory.model_pass=inline")
    assert settings == {"llm.n_threads": "1", "memory.model_pass": "inline"}
    assert settings_environ(settings) == {"EGOMEM_LLM__N_THREADS": "1", "EGOMEM_MEMORY__MODEL_PASS": "inline"}
    assert parse_settings("") == {}
    cfg = config_of(parse_rows("llm.n_threads=1", baseline=False)[0])
    assert cfg.llm.n_threads == 1 and cfg.memory.model_pass == "after"


@pytest.mark.parametrize("bad", ["llm.n_threads", "n_threads=1", "llm.n_threads=", "a.b.c=1"])
def test_a_malformed_setting_is_a_one_line_error(bad: str) -> None:
    with pytest.raises(InputError, match=r"section\.key=value"):
        parse_settings(bad)


def test_realtime_refuses_a_setting_the_config_refuses_before_loading_a_model() -> None:
    with pytest.raises(InputError, match="--set config="):
        run_realtime(BenchOptions(quick=True, extra={"config": "llm.n_threads=many"}))
