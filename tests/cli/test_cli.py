from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from egomem.schemas import Fact, Relation
from egomem.store.sqlite import SQLiteStore


def egomem(*args: str, data_dir: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "egomem.cli.main", "--data-dir", str(data_dir), *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=120,
    )


@pytest.fixture
def populated(tmp_path: Path) -> tuple[Path, str, str]:
    s = SQLiteStore(tmp_path / "memory.db")
    emily, john = s.create_user("Emily"), s.create_user("John")
    s.add_fact(Fact(user_id=john.id, text="loves tennis"))
    s.add_relation(Relation(subject_id=emily.id, relation="colleague", object_id=john.id))
    s.close()
    return tmp_path, emily.id, john.id


def test_users_list_show_graph_export(populated: tuple[Path, str, str]) -> None:
    d, emily, john = populated
    out = egomem("users", "list", data_dir=d)
    assert out.returncode == 0 and "Emily" in out.stdout and "John" in out.stdout
    show = egomem("users", "show", john, data_dir=d)
    assert "loves tennis" in show.stdout
    g = egomem("graph", emily, data_dir=d)
    assert "Emily -[colleague]-> John" in g.stdout
    exp = json.loads(egomem("users", "export", john, data_dir=d).stdout)
    assert exp["user"]["name"] == "John" and exp["facts"][0]["text"] == "loves tennis"
    assert len(exp["relations"]) == 1


def test_rename_and_delete(populated: tuple[Path, str, str]) -> None:
    d, _, john = populated
    assert egomem("users", "rename", john, "Johnny", data_dir=d).returncode == 0
    assert egomem("users", "delete", john, data_dir=d, stdin="n\n").returncode != 0  # refused at the prompt
    assert "Johnny" in egomem("users", "list", data_dir=d).stdout
    assert egomem("users", "delete", john, "--yes", data_dir=d).returncode == 0
    assert "Johnny" not in egomem("users", "list", data_dir=d).stdout


def test_unknown_user_is_one_line_error(populated: tuple[Path, str, str]) -> None:
    d, _, _ = populated
    before = (d / "memory.db").stat().st_size
    for args in (("users", "show", "u_nope"), ("users", "delete", "u_nope", "--yes"), ("graph", "u_nope")):
        r = egomem(*args, data_dir=d)
        assert r.returncode == 2
        assert r.stderr.strip() == "egomem: error: unknown user id 'u_nope'"
    assert (d / "memory.db").stat().st_size == before


def test_bad_config_and_unwritable_data_dir(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("[store]\nbackend = 'oracle'\n")
    r = subprocess.run(
        [sys.executable, "-m", "egomem.cli.main", "--config", str(cfg), "users", "list"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2 and "store.backend" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = egomem("users", "list", data_dir=blocker / "sub")
    assert r.returncode == 2 and "egomem: error:" in r.stderr


def test_bench_smoke_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    r = egomem("bench", "smoke", "--quick", "--json", str(out), data_dir=tmp_path)
    assert r.returncode == 0, r.stderr
    metrics = json.loads(out.read_text())["metrics"]
    assert metrics["users"] == 50 and metrics["keys_loaded"] == 50 and metrics["user_writes_per_s"] > 0
    assert "user_writes_per_s" in r.stdout
