"""`egomem run` piped: a timestamped line per tenth of the recording (stderr is not a terminal)."""

from __future__ import annotations

import re

import pytest

from egomem.cli.agent_run import step_lines


def test_step_lines_mark_each_tenth(capsys: pytest.CaptureFixture[str]) -> None:
    items = list(step_lines(iter(range(50)), 50))  # type: ignore[arg-type]  (any items: plumbing only)
    assert items == list(range(50))  # passed through unchanged
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 10
    assert all(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d run: \d+% of the recording processed", ln) for ln in lines)
    assert [ln.split("run: ")[1].split("%")[0] for ln in lines] == [str(10 * k) for k in range(1, 11)]
