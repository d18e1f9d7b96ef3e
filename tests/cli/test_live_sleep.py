"""`egomem live` runs sleep-time work while the device idles: a real `egomem live` on a silent
virtual microphone folds the store's old summaries, fades its weak facts and deletes expired keys."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import sqlalchemy as sa

from egomem.memory.consolidate import RUNNING_PREFIX
from egomem.memory.strength import DAY_S
from egomem.schemas import Fact, FactKind, Modality
from egomem.store.sqlite import SQLiteStore

OLD = time.time() - 100 * DAY_S


def test_live_consolidates_while_nobody_talks(tmp_path: Path) -> None:
    s = SQLiteStore(tmp_path / "memory.db")
    ana = s.create_user("Ana").id
    for d in range(6):
        text = f"On day {d}, Ana talked with the assistant. Ana: topic number {d}."
        s.add_fact(Fact(user_id=ana, kind=FactKind.SUMMARY, text=text, valid_from=OLD + d * DAY_S))
    s.add_fact(Fact(user_id=ana, text="went to a concert once", valid_from=OLD, importance=0.0))
    bob = s.create_user("Bob").id  # enrolled by voice 4 years ago, never seen since
    s.add_key(bob, Modality.VOICE, np.ones(256), "resemblyzer")
    s.db.execute(sa.text("UPDATE identity_keys SET created_at = :t"), {"t": time.time() - 4 * 365 * DAY_S})
    s.db.execute(
        sa.text("UPDATE users SET created_at = :t WHERE id = :u"), {"t": time.time() - 4 * 365 * DAY_S, "u": bob}
    )
    s.close()
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "EGOMEM_LLM__PROVIDER": "rules",
        # Tiny times so the schedule turns within a few seconds of silence.
        "EGOMEM_MEMORY__SLEEP_INTERVAL_S": "0.5",
        "EGOMEM_MEMORY__SLEEP_IDLE_S": "0",
        "EGOMEM_RUNTIME__SESSION_MERGE_GAP_S": "0",
        "EGOMEM_RUNTIME__SESSION_MARGIN_S": "0",
        "EGOMEM_RUNTIME__MEMORY_INTERVAL_S": "0.2",
        "EGOMEM_MEMORY__KEEP_RECENT_SUMMARIES": "2",
        "EGOMEM_MEMORY__RETENTION_MIN_STRENGTH": "0.05",
    }
    cmd = [
        sys.executable, "-m", "egomem.cli.main", "--data-dir", str(tmp_path), "live", "--quiet",
        "--mic", "lavfi:anullsrc=r=16000:cl=mono,arealtime", "--camera", "none", "--duration", "6",
    ]  # fmt: skip
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    s = SQLiteStore(tmp_path / "memory.db")
    summaries = s.list_facts(ana, kinds=[FactKind.SUMMARY])
    assert len(summaries) == 3 and sum(x.text.startswith(RUNNING_PREFIX) for x in summaries) == 1
    assert s.list_facts(ana, kinds=[FactKind.FACT]) == []
    assert any(h.cause == "consolidate: folded into running summary" for h in s.history(ana))
    assert s.list_keys() == [] and s.get_user(bob).name == "Bob"  # the biometrics expired, not the person
    s.close()
