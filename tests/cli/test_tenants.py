"""`egomem tenants`: keys shown once with what they grant, listed by key id only, revoked, rotated."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from egomem.cli.main import cli
from egomem.config import load_config
from egomem.server.tenants import TenantRegistry


def _run(tmp_path: Path, *args: str) -> tuple[int, str]:
    r = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), *args], env={"EGOMEM_DATA_DIR": None})
    return r.exit_code, r.output


def _tenant_of(tmp_path: Path, key: str) -> str | None:
    reg = TenantRegistry(load_config(data_dir=tmp_path, environ={}))
    try:
        return reg.authenticate(key)
    finally:
        reg.close()


def test_key_shown_once_with_grants_then_listed_by_id_only(tmp_path: Path) -> None:
    code, out = _run(tmp_path, "tenants", "add", "home")
    assert code == 0 and "grants:" in out and "shown once" in out
    key = next(line.split()[1] for line in out.splitlines() if line.startswith("key:"))
    kid = next(line.split()[2] for line in out.splitlines() if line.startswith("key id:"))
    assert _tenant_of(tmp_path, key) == "home"
    code, listing = _run(tmp_path, "tenants", "list")
    assert code == 0 and listing.splitlines()[0].split()[:3] == ["TENANT", "CREATED", "KEY"]
    assert kid in listing and key not in listing and key[4:12] not in listing


def test_revoke_by_key_id_and_by_key(tmp_path: Path) -> None:
    first = json.loads(_run(tmp_path, "tenants", "add", "home", "--json")[1])
    second = json.loads(_run(tmp_path, "tenants", "key", "home", "--json")[1])
    assert "home" in first["grants"] and first["key_id"] != second["key_id"]
    code, out = _run(tmp_path, "tenants", "revoke", "home", first["key_id"])
    assert code == 0 and f"revoked key {first['key_id']}" in out and "1 key(s) left" in out
    assert _tenant_of(tmp_path, first["key"]) is None and _tenant_of(tmp_path, second["key"]) == "home"
    assert _run(tmp_path, "tenants", "revoke", "home", second["key"])[0] == 0  # by the key itself
    assert _tenant_of(tmp_path, second["key"]) is None
    listing = json.loads(_run(tmp_path, "tenants", "list", "--json")[1])
    assert listing[0]["tenant"] == "home" and listing[0]["keys"] == []


def test_rotate_replaces_every_older_key(tmp_path: Path) -> None:
    a = json.loads(_run(tmp_path, "tenants", "add", "home", "--json")[1])
    b = json.loads(_run(tmp_path, "tenants", "key", "home", "--json")[1])
    new = json.loads(_run(tmp_path, "tenants", "rotate", "home", "--json")[1])
    assert sorted(new["revoked"]) == sorted([a["key_id"], b["key_id"]])
    assert _tenant_of(tmp_path, a["key"]) is None and _tenant_of(tmp_path, b["key"]) is None
    assert _tenant_of(tmp_path, new["key"]) == "home"


def test_bad_references_are_one_line_errors(tmp_path: Path) -> None:
    from egomem.errors import InputError, NotFoundError

    _run(tmp_path, "tenants", "add", "home")
    for args, exc in (
        (("revoke", "home", "abc"), InputError),  # too short to name a key
        (("revoke", "home", "0" * 12), NotFoundError),
        (("revoke", "nope", "abcdef"), NotFoundError),
        (("rotate", "nope"), NotFoundError),
    ):
        r = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "tenants", *args])
        assert isinstance(r.exception, exc), args
        assert "\n" not in str(r.exception)
    assert len(json.loads(_run(tmp_path, "tenants", "list", "--json")[1])[0]["keys"]) == 1  # nothing revoked
