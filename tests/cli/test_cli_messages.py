"""Small things a first-time user reads: help texts, headers, refusals in one clear line."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from egomem.cli.main import cli
from egomem.errors import InputError
from egomem.store.sqlite import SQLiteStore


def test_every_users_subcommand_has_help_text() -> None:
    users = cli.commands["users"]
    assert hasattr(users, "commands")
    for name, cmd in users.commands.items():
        assert cmd.help and cmd.help.strip(), name
    out = CliRunner().invoke(cli, ["users", "--help"]).output
    for name in users.commands:
        line = next(ln for ln in out.splitlines() if ln.strip().startswith(name + " "))
        assert len(line.split()) > 1, line  # a description beside the name


@pytest.mark.parametrize("name", ["", "   ", "\t"])
def test_rename_to_an_empty_name_is_refused(tmp_path: Path, name: str) -> None:
    s = SQLiteStore(tmp_path / "memory.db")
    john = s.create_user("John").id
    s.close()
    r = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "users", "rename", john, name])
    assert isinstance(r.exception, InputError) and "cannot be empty" in str(r.exception)
    assert "None" not in r.output
    s = SQLiteStore(tmp_path / "memory.db")
    assert s.get_user(john).name == "John"  # unchanged
    s.close()


def test_rename_tidies_spaces(tmp_path: Path) -> None:
    s = SQLiteStore(tmp_path / "memory.db")
    john = s.create_user("John").id
    s.close()
    r = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "users", "rename", john, "  John   Smith "])
    assert r.exit_code == 0 and r.output.strip() == f"renamed {john} to John Smith"


def test_providers_table_has_a_header() -> None:
    r = CliRunner().invoke(cli, ["providers"])
    assert r.exit_code == 0
    assert r.output.splitlines()[0].split() == ["KIND", "PROVIDER", "ROLE", "STATE", "DESCRIPTION"]
