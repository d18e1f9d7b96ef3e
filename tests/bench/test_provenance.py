"""Provenance of benchmark results: the code's state is taken before a run, a committed result
from uncommitted code is refused, a run whose code changed under it is refused, and a result
whose measured code changed since its commit is marked stale."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from egomem_eval.record import GitState, ProvenanceError, check_end, check_start, git_state

ROOT = Path(__file__).resolve().parents[2]


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    r.mkdir()
    _git(r, "init", "-q")
    _git(r, "config", "user.email", "t@example.org")
    _git(r, "config", "user.name", "t")
    (r / "code.py").write_text("x = 1\n")
    (r / "benchmarks" / "results").mkdir(parents=True)
    (r / "benchmarks" / "results" / "a.json").write_text("{}\n")
    _git(r, "add", ".")
    _git(r, "commit", "-q", "-m", "one")
    return r


def test_git_state_names_the_commit_and_hashes_uncommitted_code(repo: Path) -> None:
    clean = git_state(repo)
    assert clean.commit == _git(repo, "rev-parse", "HEAD").strip()
    assert clean.dirty is False and clean.diff_sha256 is None
    # Benchmark outputs are not code: rewriting a result leaves the tree clean.
    (repo / "benchmarks" / "results" / "a.json").write_text('{"new": 1}\n')
    (repo / "BENCHMARKS.md").write_text("rendered\n")
    assert git_state(repo).dirty is False
    (repo / "code.py").write_text("x = 2\n")
    edited = git_state(repo)
    assert edited.dirty is True and edited.diff_sha256 is not None
    (repo / "new_module.py").write_text("y = 1\n")  # untracked code counts too
    more = git_state(repo)
    assert more.diff_sha256 not in (None, edited.diff_sha256)
    (repo / "code.py").write_text("x = 3\n")
    assert git_state(repo).diff_sha256 != more.diff_sha256


def test_a_dirty_tree_cannot_write_a_committed_result(repo: Path) -> None:
    (repo / "code.py").write_text("x = 2\n")
    state = git_state(repo)
    with pytest.raises(ProvenanceError, match="uncommitted changes"):
        check_start(state, repo / "benchmarks" / "results" / "face.json", allow_dirty=False)
    check_start(state, repo / "benchmarks" / "results" / "face.json", allow_dirty=True)  # shown as dirty
    check_start(state, repo.parent / "scratch.json", allow_dirty=False)  # not a committed result


def test_a_run_whose_code_changed_under_it_is_refused(repo: Path) -> None:
    start = git_state(repo)
    check_end(start, git_state(repo))  # nothing changed: fine
    (repo / "code.py").write_text("x = 2\n")
    with pytest.raises(ProvenanceError, match="working tree changed"):
        check_end(start, git_state(repo))
    _git(repo, "commit", "-q", "-am", "two")
    with pytest.raises(ProvenanceError, match="HEAD moved"):
        check_end(start, git_state(repo))
    assert GitState(None, None, None).as_json()["taken"] == "start"


def _provenance_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_provenance", ROOT / "scripts" / "bench_provenance.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_measured_paths_follow_the_imports() -> None:
    bp = _provenance_script()
    face = bp.measured_paths("face")
    assert "src/egomem/perception/face.py" in face and "src/egomem/bench/face.py" in face
    assert not any(p.startswith("src/egomem/server/") for p in face)  # the face bench never imports the server
    assert "src/egomem_eval/record.py" not in face  # plumbing, not figures
    # The conversation bench builds providers: the registry's targets (named by string) count.
    convo = bp.measured_paths("conversation")
    assert "src/egomem/llm/local.py" in convo and "src/egomem/memory/rules_provider.py" in convo
    assert any(p.startswith("src/egomem/llm/prompts/") and p.endswith(".md") for p in convo)  # data files too


def test_measured_paths_include_what_a_bench_runs_in_another_process() -> None:
    # bench serve's workers are `egomem serve` processes: the server's code counts although the
    # bench never imports it (its tenant model workers, for one, decide the lag it measures).
    serve = _provenance_script().measured_paths("serve")
    assert "src/egomem/server/refiners.py" in serve and "src/egomem/server/session.py" in serve


def test_measured_paths_span_the_evaluation_and_training_packages() -> None:
    bp = _provenance_script()
    # What a bench runs from the evaluation package counts: the trigger bench's synthetic streams.
    assert "src/egomem_eval/trigger/synth.py" in bp.measured_paths("trigger")
    assert "src/egomem_eval/data.py" not in bp.measured_paths("trigger")  # finds the data: plumbing
    # bench eval-dialog imports the training package's evaluation (statically, inside the bench).
    dialog = bp.measured_paths("eval-dialog")
    assert "src/egomem_training/eval/dialog.py" in dialog and "src/egomem_training/eval/judge.py" in dialog


def test_a_run_that_lists_its_loaded_modules_measured_those_alone() -> None:
    bp = _provenance_script()
    loaded = ("egomem", "egomem.bench", "egomem.bench.face", "egomem.perception.face", "egomem_eval.record")
    face = bp.measured_paths("face", loaded)
    assert "src/egomem/perception/face.py" in face and "src/egomem/bench/face.py" in face
    assert "src/egomem_eval/record.py" not in face  # plumbing, loaded or not
    # The static graph of the same bench reaches further than what this run imported.
    assert len(face) < len(bp.measured_paths("face"))
    assert not any(p.startswith("src/egomem/llm/") for p in face)
    # A loaded module that starts product code in another process brings that code along.
    serve = bp.measured_paths("serve", ("egomem.bench._servers",))
    assert "src/egomem/server/session.py" in serve
    # A module that ran and whose file is gone since counts by its old path (git sees it deleted).
    gone = bp.measured_paths("face", ("egomem.perception.no_such_module",))
    assert "src/egomem/perception/no_such_module.py" in gone


def test_the_envelope_lists_the_modules_the_run_loaded() -> None:
    from egomem_eval.record import envelope

    rec = envelope("x", "egomem bench x", git_state(ROOT), None, 1.0)
    assert "egomem_eval.record" in rec["modules"] and rec["modules"] == sorted(rec["modules"])
    assert not any(m.split(".")[0] not in ("egomem", "egomem_eval", "egomem_training") for m in rec["modules"])


@pytest.mark.skipif(_git(ROOT, "rev-parse", "--is-shallow-repository").strip() == "true", reason="needs history")
def test_staleness_names_changed_files_and_ancestry_is_checked() -> None:
    bp = _provenance_script()
    # The first commit that has bench/face.py; face.py has changed since, and any tree says so.
    first = _git(ROOT, "log", "--diff-filter=A", "--format=%H", "--", "src/egomem/bench/face.py").split()[-1]
    st = bp.staleness("face", first)
    assert st is not None and "src/egomem/bench/face.py" in st.changed
    assert bp.staleness("face", None) is None
    # A commit this history lacks (a run on a branch that never landed) is stale in every
    # measured file, not a crash: the render still works and --check names the file.
    gone = bp.staleness("face", "0" * 40)
    assert gone is not None and gone.changed == bp.measured_paths("face")
    assert bp.not_ancestors({"ok": first}) == []
    assert bp.not_ancestors({"gone": "0" * 40, "none": None}) == [
        "gone: commit 0000000000 is not an ancestor of HEAD",
        "none: no commit recorded",
    ]


def test_only_a_change_of_code_makes_a_python_file_changed() -> None:
    code_of = _provenance_script().code_of
    src = '"""Module."""\n\ndef f(x):\n    """Doc."""\n    return x + 1  # one more\n'
    # Docstrings, comments and layout are not code.
    assert code_of(src) == code_of('"""Module, reworded."""\ndef f(x):\n    return x + 1\n')
    assert code_of(src) == code_of("def f(x):\n    '''Other.'''\n    return (x\n            + 1)  # why\n")
    # Anything that runs differently is.
    assert code_of(src) != code_of("def f(x):\n    return x + 2\n")
    assert code_of(src) != code_of("def f(x):\n    return 1 + x\n")
    assert code_of("X = 'a'\n") != code_of("X = 'b'\n")  # a string constant is data, not a docstring
    assert code_of("def f():\n    'doc'\n    return 'x'\n") != code_of("def f():\n    return 'y'\n")
    # A module that reads docstrings as data, or does not parse, counts every edit.
    assert code_of('"""Usage."""\nprint(__doc__)\n') is None
    assert code_of("@server.tool()\ndef ask(q):\n    '''Told to the client.'''\n") is None
    assert code_of("def f(:\n") is None


def test_a_file_changed_only_in_comments_is_not_stale(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bp = _provenance_script()
    monkeypatch.setattr(bp, "ROOT", repo)
    (repo / "m.py").write_text("def f(x):\n    return x\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "m")
    run = _git(repo, "rev-parse", "HEAD").strip()
    (repo / "m.py").write_text('def f(x):\n    """Now documented."""\n    return x  # the same\n')
    assert bp._same_code(run, "m.py")
    (repo / "m.py").write_text("def f(x):\n    return -x\n")
    assert not bp._same_code(run, "m.py")
    (repo / "new.py").write_text("y = 1\n")  # not there at the run's commit: new code
    assert not bp._same_code(run, "new.py")
    (repo / "m.py").unlink()  # gone: a change
    assert not bp._same_code(run, "m.py")
