"""`egomem consolidate [--dry-run]`: the sleep-time pass by hand, on a real store."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import sqlalchemy as sa
from click.testing import CliRunner

from egomem.cli.main import cli
from egomem.memory.strength import DAY_S
from egomem.schemas import Fact, FactKind, Modality
from egomem.store.sqlite import SQLiteStore

OLD = time.time() - 4 * 365 * DAY_S


def fill(path: Path) -> tuple[str, str]:
    s = SQLiteStore(path / "memory.db")
    ana, gone = s.create_user("Ana"), s.create_user("Bob")
    for d in range(7):
        text = f"On day {d}, Ana talked with the assistant. Ana: topic number {d}."
        s.add_fact(Fact(user_id=ana.id, kind=FactKind.SUMMARY, text=text, valid_from=OLD + d * DAY_S))
    s.add_fact(Fact(user_id=ana.id, text="went to a concert once", valid_from=OLD, importance=0.0))
    s.add_key(gone.id, Modality.VOICE, np.ones(256), "resemblyzer")
    s.touch_user(ana.id, time.time())
    s.close()
    # Bob's key is as old as the file: make it 4 years old, as if he was last here then.
    s = SQLiteStore(path / "memory.db")
    s.db.execute(sa.text("UPDATE identity_keys SET created_at = :t"), {"t": OLD})
    s.db.execute(sa.text("UPDATE users SET created_at = :t"), {"t": OLD})
    s.close()
    return ana.id, gone.id


def test_dry_run_reports_per_person_and_changes_nothing(tmp_path: Path) -> None:
    ana, bob = fill(tmp_path)
    env = {"EGOMEM_MEMORY__RETENTION_MIN_STRENGTH": "0.05"}
    args = ["--data-dir", str(tmp_path), "consolidate"]
    r = CliRunner().invoke(cli, [*args, "--dry-run"], env=env)
    assert r.exit_code == 0, r.output
    assert r.output.count("Ana: would fold summary") == 2  # 7 summaries, keep_recent_summaries = 5
    assert "Ana: would fade (delete) 'went to a concert once'" in r.output
    assert f"would delete Bob ({bob}): 1 voice key(s), last seen 1460 days ago (limit 1095 days)" in r.output
    assert "dry run, nothing changed: 2 person(s); summaries folded: 2" in r.output
    s = SQLiteStore(tmp_path / "memory.db")
    assert len(s.list_facts(ana)) == 8 and len(s.list_keys()) == 1
    s.close()

    r = CliRunner().invoke(cli, [*args, "--json"], env=env)
    out = json.loads(r.output)
    assert not out["dry_run"] and len(out["people"]["Ana"]["folded"]) == 2
    assert out["keys_deleted"] == [{"person": "Bob", "user_id": bob, "modality": "voice", "keys": 1}]
    s = SQLiteStore(tmp_path / "memory.db")
    assert len(s.list_facts(ana)) == 6 and s.list_keys() == []  # 5 summaries + the running one
    s.close()
