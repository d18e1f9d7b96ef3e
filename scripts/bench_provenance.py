"""Which product code each benchmark measures, and whether its committed result still does.

A run measured the modules it had loaded when it ended (newer result files list them as
`modules`): code never imported cannot have moved its figures. Those modules' files count, with
the data files beside them and what they start in other processes (below). For older result
files, without that list, the static import graph stands in:
a benchmark measures the modules its own module imports, directly or not (the import graph
from grimp, the library behind import-linter; imports inside functions count), the modules
the provider registry names by dotted path when one of them builds providers (calls
`create` / `create_provider`; merely importing a config class builds nothing), and the data
files beside all of those (prompts, weights, cohorts). A module that starts product code in
another process declares it (`RUNS_IN_SUBPROCESS`, a tuple of module names: `bench serve`'s
workers run `egomem serve`), and that code counts too. The graph spans the three packages a
bench may run: the product (`egomem`), the evaluation package (`egomem_eval`: loaders,
generators, scorers) and the training package (`egomem_training`, e.g. `bench eval-dialog`).
The benchmark plumbing (`egomem.bench` itself, `egomem_eval.record`, `egomem_eval.data`) is
left out: it writes the envelope and finds the data, not the figures.

A result is stale when any of those files differs between the commit its run recorded and
the working tree: BENCHMARKS.md then says which files changed, so no row rests on a run
older than its code without saying so. Compared with the working tree, not HEAD, so that a
commit which changes measured code carries a BENCHMARKS.md that already says so.

A Python file counts as changed when its code changed: one whose syntax tree is the same once
its docstrings are set aside (comments and layout never reach the tree) ran the same code, so an
edited comment does not send a day of benchmarks back to the queue. Where a module reads
docstrings as data (`__doc__`, or functions registered as MCP tools, whose docstrings are the
tool descriptions a client's model reads), its docstrings count as code.
"""

from __future__ import annotations

import ast
import re
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PACKAGES = ("egomem", "egomem_eval", "egomem_training")
PLUMBING = {"egomem.bench", "egomem_eval.record", "egomem_eval.data"}
_TARGET = re.compile(r"[\"'](egomem\.[a-z_.]+):[A-Za-z_]+[\"']")
_BUILDS = re.compile(r"\bcreate(_provider)?\(")
# A module that starts product code in another process (`bench serve`'s workers) names it.
_SUBPROCESS = re.compile(r"^RUNS_IN_SUBPROCESS\s*=\s*\(([^)]*)\)", re.M)
# Docstrings read as data: a module's own text, or an MCP tool's description.
_DOCS_AS_DATA = re.compile(r"__doc__|\.tool\(")


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True, timeout=60).stdout


@cache
def _graph():  # type: ignore[no-untyped-def]
    import grimp  # dev dependency (import-linter's)

    return grimp.build_graph(*PACKAGES, cache_dir=None)


def _module_file(module: str) -> Path | None:
    base = SRC.joinpath(*module.split("."))
    for cand in (base.with_suffix(".py"), base / "__init__.py"):
        if cand.is_file():
            return cand
    return None


def _closure(roots: set[str]) -> set[str]:
    graph = _graph()
    out: set[str] = set()
    todo = list(roots)
    targets_added = False
    while todo:
        m = todo.pop()
        if m in out or m not in graph.modules:
            continue
        out.add(m)
        todo += [u for u in graph.find_upstream_modules(m) if u not in out]
        f = _module_file(m)
        declared = _SUBPROCESS.search(f.read_text()) if f is not None else None
        if declared is not None:
            todo += re.findall(r"[\"']([a-z_.]+)[\"']", declared.group(1))
        if not targets_added and f is not None and m != "egomem.providers" and _BUILDS.search(f.read_text()):
            targets_added = True  # a builder: the registry's targets, named by dotted path, count
            todo += _TARGET.findall((_module_file("egomem.providers") or Path("/dev/null")).read_text())
    return out


def _data_files(folder: Path) -> list[Path]:
    """Files beside a module that are not Python: prompts, weights, cohorts; and folders of
    data that are no package."""
    out: list[Path] = []
    for p in sorted(folder.iterdir()):
        data_file = p.is_file() and p.suffix not in (".py", ".pyc")
        data_dir = p.is_dir() and not (p / "__init__.py").exists() and p.name != "__pycache__"
        if data_file or data_dir:
            out.append(p)
    return out


def _subprocess_closure(modules: set[str]) -> set[str]:
    """What the loaded modules start in other processes (their RUNS_IN_SUBPROCESS), with its imports."""
    declared: set[str] = set()
    for m in modules:
        f = _module_file(m)
        found = _SUBPROCESS.search(f.read_text()) if f is not None else None
        if found is not None:
            declared.update(re.findall(r"[\"']([a-z_.]+)[\"']", found.group(1)))
    return _closure(declared) if declared else set()


@cache
def measured_paths(bench: str, loaded: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The repository paths (files and data folders) whose content a benchmark's figures depend on.

    `loaded`: the modules its run had imported (the result's `modules`, newer files): only
    those ran in-process, so they and what they start in other processes are what it measured.
    Without it, everything the bench module can import (the static graph) counts."""
    if loaded is not None:
        modules = (set(loaded) | _subprocess_closure(set(loaded))) - PLUMBING
    else:
        modules = _closure({"egomem.bench." + bench.replace("-", "_")}) - PLUMBING
    paths: set[Path] = set()
    for m in modules:
        f = _module_file(m)
        if f is None:
            if loaded is not None:  # it ran, and its file is gone since: that is a change
                paths.add(SRC.joinpath(*m.split(".")).with_suffix(".py"))
            continue
        paths.add(f)
        paths.update(_data_files(f.parent))
    return tuple(sorted(str(p.relative_to(ROOT)) for p in paths))


@dataclass(frozen=True)
class Staleness:
    commit: str
    changed: tuple[str, ...]  # measured paths that differ from the run's commit


def staleness(bench: str, commit: str | None, loaded: tuple[str, ...] | None = None) -> Staleness | None:
    """The measured files that changed since `commit` (None: none changed, or no commit);
    `loaded` as for `measured_paths`."""
    if not commit:
        return None
    paths = measured_paths(bench, loaded)
    if not paths:
        return None
    known = subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=ROOT, capture_output=True, timeout=60)
    if known.returncode != 0:
        # A run on a commit this history lacks (a branch that never landed): none of what it
        # measured can be shown to be here, so every measured file counts as changed.
        # `not_ancestors` makes `--check` fail on it with the file's name.
        return Staleness(commit, paths)
    changed = {p for p in _git("diff", "--name-only", commit, "--", *paths).split() if not _same_code(commit, p)}
    changed |= set(_git("ls-files", "--others", "--exclude-standard", "--", *paths).split())
    return Staleness(commit, tuple(sorted(changed))) if changed else None


def code_of(source: str) -> str | None:
    """A Python module's code as a comparable text: its syntax tree without docstrings (comments and
    layout are not in it). None when it does not parse, or reads docstrings as data (then every
    change counts)."""
    if _DOCS_AS_DATA.search(source):
        return None
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and _docstring(node):
            node.body = node.body[1:] or [ast.Pass()]
    return ast.dump(tree)


def _docstring(node: ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    first = node.body[0] if node.body else None
    return isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)


def _same_code(commit: str, path: str) -> bool:
    """Whether a Python file that git sees changed since `commit` still holds the same code there
    and in the working tree (only docstrings, comments or layout moved)."""
    if not path.endswith(".py") or not (ROOT / path).is_file():
        return False
    before = _code_at(commit, path)
    return before is not None and before == code_of((ROOT / path).read_text())


@cache
def _code_at(commit: str, path: str) -> str | None:
    """`code_of` the file as it was at `commit` (None: not there then, new code). A commit's files never
    change, and many results ran on one commit: each is read and parsed once."""
    old = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    return code_of(old.stdout) if old.returncode == 0 else None


def not_ancestors(commits: dict[str, str | None]) -> list[str]:
    """Result files whose recorded commit is not in HEAD's history (a run on a branch that
    never landed, or on code since rewritten): what they measured is not in this tree."""
    bad = []
    for name, commit in sorted(commits.items()):
        if not commit:
            bad.append(f"{name}: no commit recorded")
            continue
        ok = subprocess.run(
            ["git", "merge-base", "--is-ancestor", commit, "HEAD"], cwd=ROOT, capture_output=True, timeout=60
        )
        if ok.returncode != 0:
            bad.append(f"{name}: commit {commit[:10]} is not an ancestor of HEAD")
    return bad
