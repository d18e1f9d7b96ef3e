"""`egomem users merge | split | undo | repairs` through the command line, on a SQLite store."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from egomem.cli.main import main
from egomem.schemas import Episode, Fact
from egomem.store.sqlite import SQLiteStore


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


Egomem = Callable[..., Ran]


@pytest.fixture
def egomem(capsys: pytest.CaptureFixture[str]) -> Egomem:
    """The CLI's own entry point, in this process (a subprocess per command costs seconds of imports)."""

    def run(*args: str, data_dir: Path) -> Ran:
        capsys.readouterr()
        try:
            main(["--data-dir", str(data_dir), *args])
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        out = capsys.readouterr()
        return Ran(code, out.out, out.err)

    return run


def test_split_undo_merge_and_bad_input(tmp_path: Path, egomem: Egomem) -> None:
    s = SQLiteStore(tmp_path / "memory.db")
    ann, bob = s.create_user("Ann"), s.create_user("Bob")
    e1 = s.add_episode(Episode(start=1, end=2, participants=[ann.id], user_transcript="I'm Ann"))
    e2 = s.add_episode(Episode(start=3, end=4, participants=[ann.id], user_transcript="I fly planes"))
    s.add_fact(Fact(user_id=ann.id, text="is a nurse", source_episode=e1.id))
    s.add_fact(Fact(user_id=ann.id, text="is a pilot", source_episode=e2.id))
    s.close()

    show = egomem("users", "show", ann.id, data_dir=tmp_path)
    assert f"episode {e2.id}" in show.stdout
    out = egomem("users", "split", ann.id, "--episode", e2.id, "--name", "Dan", data_dir=tmp_path)
    assert out.returncode == 0, out.stderr
    repair_id = re.search(r"users undo (\d+)", out.stdout)
    assert repair_id and "1 facts" in out.stdout and "Dan (" in out.stdout
    listed = egomem("users", "list", data_dir=tmp_path).stdout
    assert "Dan" in listed
    assert "repair 1" in egomem("users", "repairs", ann.id, data_dir=tmp_path).stdout
    assert egomem("users", "undo", repair_id.group(1), data_dir=tmp_path).returncode == 0
    assert "Dan" not in egomem("users", "list", data_dir=tmp_path).stdout
    assert "[undone]" in egomem("users", "repairs", data_dir=tmp_path).stdout

    before = (tmp_path / "memory.db").read_bytes()
    for args, message in (
        (("users", "undo", repair_id.group(1)), "repair 1 was already undone"),
        (("users", "merge", ann.id, ann.id), "cannot merge a user into itself"),
        (("users", "merge", ann.id, "u_nope"), "unknown user id 'u_nope'"),
        (("users", "split", bob.id, "--episode", e1.id), f"episode {e1.id} is not one of {bob.id}'s episodes"),
        (("users", "split", ann.id, "--episode", "e_nope"), "unknown episode id 'e_nope'"),
    ):
        r = egomem(*args, data_dir=tmp_path)
        assert (r.returncode, r.stderr.strip()) == (2, f"egomem: error: {message}"), args
    past_64_bits = egomem("users", "undo", str(2**63), data_dir=tmp_path)  # a clear usage error, no traceback
    assert past_64_bits.returncode == 2 and "is not in the range" in past_64_bits.stderr
    assert "Traceback" not in past_64_bits.stderr
    key_past = egomem("users", "split", ann.id, "--episode", e1.id, "--key", str(2**63), data_dir=tmp_path)
    assert key_past.returncode == 2 and "is not in the range" in key_past.stderr
    assert (tmp_path / "memory.db").read_bytes() == before

    merged = egomem("users", "merge", ann.id, bob.id, data_dir=tmp_path)
    assert merged.returncode == 0 and "merged Bob" in merged.stdout
    assert "Bob" not in egomem("users", "list", data_dir=tmp_path).stdout
