"""`[store] schema_name` (EGOMEM_STORE__SCHEMA_NAME): the PostgreSQL schema a server's memory lives in,
so several workers of one fleet (`bench serve --set workers=2`) share one, and others stay apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from egomem.config import load_config
from egomem.errors import StoreError
from egomem.store import open_store

from .conftest import PG_DSN

psycopg = pytest.importorskip("psycopg")
pytestmark = [pytest.mark.postgres, pytest.mark.skipif(not PG_DSN, reason="EGOMEM_TEST_PG_DSN is not set")]


def _env(schema: str, key_file: Path | None = None) -> dict[str, str]:
    env = {"EGOMEM_STORE__PROVIDER": "postgres", "EGOMEM_STORE__DSN": PG_DSN, "EGOMEM_STORE__SCHEMA_NAME": schema}
    if key_file is not None:  # the workers of one fleet share the master key
        env["EGOMEM_PRIVACY__MASTER_KEY_FILE"] = str(key_file)
    return env


def test_two_workers_configured_with_one_schema_share_its_memory(schema: str, tmp_path: Path) -> None:
    a = open_store(load_config(data_dir=tmp_path / "a", environ=_env(schema, tmp_path / "master.key")))
    b = open_store(load_config(data_dir=tmp_path / "b", environ=_env(schema, tmp_path / "master.key")))
    try:
        emily = a.create_user("Emily")
        assert [u.name for u in b.list_users()] == ["Emily"] and b.get_user(emily.id).name == "Emily"
        with psycopg.connect(PG_DSN) as conn:  # and the rows are in that schema, not in public
            assert conn.execute(f"SELECT count(*) FROM {schema}.users").fetchone() == (1,)
    finally:
        a.close()
        b.close()


def test_a_bad_schema_name_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="invalid schema name"):
        open_store(load_config(data_dir=tmp_path, environ=_env("Robert'); DROP TABLE users;--")))
