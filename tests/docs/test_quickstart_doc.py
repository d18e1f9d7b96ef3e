"""docs/quickstart.md runs as written (#23 item 6): its `sh` and `python` blocks, in order, as one
bash script from the repository root, with `EGOMEM_DATA_DIR` a temporary folder.

The page's own convention: an HTML comment on the line before a block marks it
`<!-- doc-test: slow -->` (only in the slow run: it loads Whisper or the local LLM, or takes
minutes) or `<!-- doc-test: skip REASON -->` (never run); an unmarked block runs in `make test`.
The fast run leaves the slow blocks out, so no fast block may need what a slow one made.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "quickstart.md"
RUNNABLE = {"sh": "sh", "bash": "sh", "python": "python"}
_MARK = re.compile(r"^<!--\s*doc-test:\s*(?P<mark>slow|skip)\b\s*(?P<reason>.*?)\s*-->$")
_FENCE = re.compile(r"^```(?P<lang>[\w-]*)\s*$")


@dataclass(frozen=True)
class Block:
    line: int  # of its opening fence, 1-based
    lang: str
    mark: str  # "", "slow" or "skip"
    reason: str
    code: str


def blocks(text: str) -> list[Block]:
    """The fenced blocks of a markdown text, each with the doc-test mark of the line before it."""
    out: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        prev = next((ln.strip() for ln in reversed(lines[:i]) if ln.strip()), "")
        mark = _MARK.match(prev)
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        out.append(
            Block(
                line=i + 1,
                lang=m.group("lang"),
                mark=mark.group("mark") if mark else "",
                reason=mark.group("reason") if mark else "",
                code="\n".join(lines[i + 1 : end]),
            )
        )
        i = end + 1
    return out


def script(doc: list[Block], *, slow: bool) -> str:
    """One bash script of the blocks to run: `sh` as they are, `python` through a here-document;
    background jobs (the server) are stopped when it ends."""
    parts = ["set -euo pipefail", "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT"]
    for b in doc:
        if b.lang not in RUNNABLE or b.mark == "skip" or (b.mark == "slow" and not slow):
            continue
        parts.append(f"echo '--- docs/quickstart.md:{b.line}' >&2")
        if RUNNABLE[b.lang] == "python":
            parts.append(f"python - <<'EGOMEM_DOC_PYTHON'\n{b.code}\nEGOMEM_DOC_PYTHON")
        else:
            parts.append(b.code)
    return "\n".join(parts) + "\n"


def run_doc(tmp_path: Path, *, slow: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EGOMEM_")}
    bin_dir = str(Path(sys.executable).parent)  # egomem and python of the environment under test
    env.update(
        EGOMEM_DATA_DIR=str(tmp_path / "data"),
        HF_HUB_OFFLINE="1",
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        VENV=sys.prefix,  # `make demo` uses this environment instead of building .venv
    )
    path = tmp_path / "quickstart.sh"
    path.write_text(script(blocks(DOC.read_text()), slow=slow))
    return subprocess.run(
        ["bash", str(path)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=3000 if slow else 600
    )


def test_every_block_is_marked_and_readme_links_the_guide() -> None:
    doc = blocks(DOC.read_text())
    assert all(b.lang for b in doc), "every block names its language"
    assert all(b.reason for b in doc if b.mark == "skip"), "a skipped block says why"
    run = [b for b in doc if b.lang in RUNNABLE and b.mark != "skip"]
    assert {b.mark for b in run} == {"", "slow"} and len(run) >= 12
    shown = " ".join(b.code for b in run)
    for command in ("make demo", "egomem run", "egomem ask", "egomem live", "egomem serve", "egomem tenants add"):
        assert command in shown, command
    assert "egomem client" in shown and "egomem mcp" not in shown.replace('args=["mcp"]', "")  # spawned by the SDK
    readme = (ROOT / "README.md").read_text()
    assert readme.split("```sh\n", 1)[1].startswith("make demo") and "docs/quickstart.md" in readme


def test_blocks_and_marks_are_parsed() -> None:
    text = "x\n\n<!-- doc-test: skip needs a camera -->\n```sh\na\nb\n```\n\n"
    text += "<!-- doc-test: slow -->\n\n```python\nc\n```\n"
    doc = blocks(text)
    assert [(b.line, b.lang, b.mark, b.reason, b.code) for b in doc] == [
        (4, "sh", "skip", "needs a camera", "a\nb"),
        (11, "python", "slow", "", "c"),
    ]
    assert "a\nb" not in script(doc, slow=True) and "<<'EGOMEM_DOC_PYTHON'\nc\n" in script(doc, slow=True)
    assert "python" not in script(doc, slow=False)


def test_quickstart_fast_blocks_run(tmp_path: Path) -> None:
    r = run_doc(tmp_path, slow=False)
    assert r.returncode == 0, r.stderr[-3000:]
    # the guide's path: a key shown once with its grants, then the agent's fact answered back
    assert "This key is shown once" in r.stdout and "grants:" in r.stdout
    assert any(
        ln.startswith("No language model answered") and "works as a nurse" in ln for ln in r.stdout.splitlines()
    ), r.stdout[-2000:]


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


@pytest.mark.slow
def test_quickstart_all_blocks_run(tmp_path: Path) -> None:
    if not _port_free(8765):
        pytest.skip("port 8765 (the guide's server) is in use")
    r = run_doc(tmp_path, slow=True)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "session" in r.stdout and "Emily" in r.stdout
