"""`bench xcost`'s rows: parsed from `--set rows=...`, the default first, each a configuration."""

from __future__ import annotations

import pytest

from egomem.bench import available
from egomem.bench.xcost import DEFAULT_ROWS, config_of, label, parse_rows
from egomem.errors import InputError
from egomem.providers import LocalLLMConfig


def test_rows_start_with_the_default_and_keep_their_order() -> None:
    rows = parse_rows("llm.prefix_cache=off; memory.extract_schema=short,memory.extract_gate=true")
    assert rows == [{}, {"llm.prefix_cache": "off"}, {"memory.extract_schema": "short", "memory.extract_gate": "true"}]
    assert [label(r) for r in rows] == [
        "default",
        "llm.prefix_cache=off",
        "memory.extract_schema=short,memory.extract_gate=true",
    ]
    assert len(parse_rows(None)) == 1 + len(DEFAULT_ROWS) and "xcost" in available()
    assert parse_rows("llm.prefix_cache=off", baseline=False) == [{"llm.prefix_cache": "off"}]


def test_a_row_is_the_products_configuration_with_its_settings() -> None:
    cfg = config_of({"llm.prefix_cache": "context", "memory.extract_schema": "short", "memory.extract_gate": "true"})
    assert isinstance(cfg.llm, LocalLLMConfig) and cfg.llm.prefix_cache == "context"
    assert cfg.memory.extract_schema == "short" and cfg.memory.extract_gate is True


@pytest.mark.parametrize("raw", ["prefix_cache=off", "llm.prefix_cache", "llm.prefix_cache="])
def test_malformed_rows_are_refused(raw: str) -> None:
    with pytest.raises(InputError):
        parse_rows(raw)


def test_an_unknown_value_is_an_input_error() -> None:
    with pytest.raises(InputError):
        config_of({"memory.extract_schema": "tiny"})
