"""`egomem users forget` and `users sensitivity` (docs/privacy.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from egomem.schemas import Fact
from egomem.store.sqlite import SQLiteStore


def egomem(*args: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "egomem.cli.main", "--data-dir", str(data_dir), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_forget_a_topic_and_override_sensitivity(tmp_path: Path) -> None:
    s = SQLiteStore(tmp_path / "memory.db")
    anna = s.create_user("Anna")
    s.add_fact(Fact(user_id=anna.id, text="loves gardening"))
    tennis = s.add_fact(Fact(user_id=anna.id, text="plays tennis"))
    s.close()
    out = egomem("users", "forget", anna.id, "gardening", data_dir=tmp_path)
    assert out.returncode == 0 and "forgot 1 fact(s)" in out.stdout
    out = egomem("users", "sensitivity", tennis.id, "private", data_dir=tmp_path)
    assert out.returncode == 0 and out.stdout.strip().endswith("private")
    bad = egomem("users", "forget", "u_nobody", "gardening", data_dir=tmp_path)
    assert bad.returncode != 0 and len(bad.stderr.strip().splitlines()) == 1
    s = SQLiteStore(tmp_path / "memory.db")
    try:
        assert [(f.text, f.sensitivity) for f in s.list_facts(anna.id)] == [("plays tennis", "private")]
    finally:
        s.close()
