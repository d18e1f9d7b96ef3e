"""`egomem bench privacy` end to end on SQLite (and PostgreSQL when EGOMEM_TEST_PG_DSN is set): every check holds."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from egomem.bench import BenchOptions, run_bench


@pytest.mark.slow
def test_every_privacy_check_holds(shared_data: Callable[[str], Path]) -> None:
    root = shared_data("faces_lfw_subset_10x10").parent
    shared_data("speech_librispeech_test_other_10spk")
    result = run_bench("privacy", BenchOptions(data=root))
    failed = [row for _, _, rows in result.tables for row in rows if row[2] != "pass"]
    assert result.metrics["all_pass"] and not failed, failed
    assert len(result.metrics["checks"]["sqlite"]) == 15
