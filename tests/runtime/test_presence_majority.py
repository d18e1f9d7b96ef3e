"""Who a session belongs to, from the identity polls around it: the same answer in every
process (a tie once went by set order, which Python's string hashing changes per process)."""

from __future__ import annotations

import os
import subprocess
import sys

from egomem.runtime.conversation_log import majority as _majority


def test_most_polls_win() -> None:
    assert _majority([("u_b", True), ("u_a", True), ("u_b", False)]) == "u_b"
    assert _majority([(None, True), (None, False)]) is None
    assert _majority([]) is None


def test_a_tie_goes_to_polls_inside_the_session_then_to_the_later_user() -> None:
    assert _majority([("u_a", True), ("u_b", False)]) == "u_a"  # u_b only in the lag after the session
    assert _majority([("u_a", True), ("u_b", True)]) == "u_b"  # both inside: the newer poll
    assert _majority([("u_b", True), ("u_a", True)]) == "u_a"


def _env(seed: int) -> dict[str, str]:
    """Only the hash seed differs; the import path is this test run's (a worktree on PYTHONPATH)."""
    path = os.environ.get("PYTHONPATH")
    return {"PYTHONHASHSEED": str(seed), **({"PYTHONPATH": path} if path else {})}


def test_the_same_in_every_process() -> None:
    code = (
        "from egomem.runtime.conversation_log import majority as _majority;"
        "print(_majority([('u_%s' % c, True) for c in 'qwertyuiop'] + [('u_%s' % c, True) for c in 'poiuytrewq']))"
    )
    seen = {
        subprocess.run(
            [sys.executable, "-c", code], env=_env(seed), capture_output=True, text=True, check=True
        ).stdout.strip()
        for seed in (1, 2, 3)
    }
    assert seen == {"u_q"}
