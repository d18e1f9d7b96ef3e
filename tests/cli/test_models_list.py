"""`models list` reports the copy `run` loads: a model assembled in the default data directory is
ready for any --data-dir (weights.ensure reuses it), so list must not say "not assembled"."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from egomem import weights
from egomem.cli.main import cli
from egomem.config import default_data_dir


def test_list_agrees_with_what_run_loads(tmp_path: Path) -> None:
    shared = default_data_dir()
    ready = [m.name for m in weights.MODELS.values() if weights.is_ready(m.name, shared)]
    if not ready:
        pytest.skip("no packaged model is assembled in the default data directory (egomem models install)")
    r = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "models", "list"])
    assert r.exit_code == 0, r.output
    for name in ready:
        line = next(ln for ln in r.output.splitlines() if ln.startswith(name + " "))
        loaded = weights.ensure(name, tmp_path)  # what run / serve would open: no assembling here
        assert "not assembled" not in line and str(loaded) in line, line
    assert not (tmp_path / "models").exists()  # nothing was copied into the fresh data dir
