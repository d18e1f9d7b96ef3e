"""Versioned prompt files `<task>.v<N>.md`: the system prompt, a line `---user---`, the user
template with `{{payload}}` where the task's JSON input goes. The prompts are part of the
repository (the paper never published its own), so a change is a new version file.

A prompt version is a set: version N of a task is its newest file at or below N, so a
task whose prompt did not change in version 2 keeps its v1 file (no copies)."""

from __future__ import annotations

from pathlib import Path

from egomem.errors import ConfigError

PROMPT_DIR = Path(__file__).parent
SPLIT = "---user---"


def _versions() -> set[int]:
    return {int(p.stem.rsplit(".v", 1)[1]) for p in PROMPT_DIR.glob("*.v*.md") if p.stem.rsplit(".v", 1)[1].isdigit()}


def prompt_path(task: str, version: int) -> Path:
    """The task's newest prompt file at or below `version`, when some task has a file of
    that version (a version no file has is a typo: the exact, missing name)."""
    if version not in _versions():
        return PROMPT_DIR / f"{task}.v{version}.md"
    for v in range(version, 0, -1):
        path = PROMPT_DIR / f"{task}.v{v}.md"
        if path.is_file():
            return path
    return PROMPT_DIR / f"{task}.v{version}.md"


def render_prompt(task: str, payload_json: str, version: int = 1) -> tuple[str, str]:
    """(system, user) messages of `task`, with the payload substituted."""
    path = prompt_path(task, version)
    if not path.is_file():
        raise ConfigError(f"no prompt file for task {task!r} version {version}: {path.name}")
    text = path.read_text(encoding="utf-8")
    if SPLIT not in text or "{{payload}}" not in text:
        raise ConfigError(f"prompt file {path.name} needs a {SPLIT} line and a {{{{payload}}}} slot")
    system, user = text.split(SPLIT, 1)
    return system.strip(), user.strip().replace("{{payload}}", payload_json)
