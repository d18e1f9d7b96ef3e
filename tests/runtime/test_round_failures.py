"""A memory round whose store write fails (memory_rounds.py): its sessions stay for the next round, and
the stream's final round, which has no next, is run again; each session is stored once, and the
counts say what failed (`RunResult.memory_failures`, the server's `done` event)."""

from __future__ import annotations

from typing import Any

import pytest
from tests.runtime.test_session_close import LINE, _run, _stored_lines

from egomem.errors import StoreError
from egomem.runtime import memory_rounds
from egomem.store.sqlite import SQLiteStore


def test_a_final_round_that_fails_is_run_again_and_stores_its_session_once(
    store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory_rounds, "FINAL_BACKOFF_S", 0.01)
    real_submit = store.jobs.submit
    refusals = [2]

    def refuse_twice(*a: Any, **kw: Any) -> bool:  # plumbing: a store that refuses the first two writes
        if refusals[0] > 0:
            refusals[0] -= 1
            raise StoreError("write refused by the store (plumbing)")
        return bool(real_submit(*a, **kw))

    monkeypatch.setattr(store.jobs, "submit", refuse_twice)
    # The phone call: one turn to the end of the stream, so the final round is the one that closes it.
    _, result = _run(store, speech=[(1.0, 25.0)], duration=25.0, trigger=[(1.0, 5.0)])
    assert _stored_lines(store) == [LINE]
    assert len(store.list_jobs()) == 1 and store.list_jobs()[0].status == "done"
    failures = result.memory_failures
    assert (failures["rounds_failed"], failures["rounds_recovered"]) == (2, 1)
    assert failures["store_failures"] == 0 and failures["retries_run"] == 0 and failures["jobs_hit"] == []
