"""The store has one API: the flat `MemoryStore` methods. Its per-entity operations
(`store.keys`, `store.facts`, ...; store/ops/) are its own implementation: no module outside
`egomem.store` imports them (import-linter) or reaches them through a store's attributes (here)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
OPS = {"users", "keys", "facts", "relations", "episodes", "evidence", "log", "jobs"}


def _names_a_store(node: ast.expr) -> bool:
    """`store`, `self.store`, `self._store`, `tenant.store`: the receiver is called a store."""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name.lstrip("_").endswith("store")


def _reaches_ops(path: Path, root: Path = SRC) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        inner = node.value if isinstance(node, ast.Attribute) else None
        if isinstance(inner, ast.Attribute) and inner.attr in OPS and _names_a_store(inner.value):
            out.append(f"{path.relative_to(root)}:{node.lineno}: .{inner.attr}.{node.attr}")
    return out


def test_no_module_outside_the_store_uses_its_operations_directly() -> None:
    files = [p for p in SRC.rglob("*.py") if "egomem/store/" not in p.as_posix()]
    assert len(files) > 100  # the source tree was found
    found = [hit for p in files for hit in _reaches_ops(p)]
    assert found == [], "use the MemoryStore methods instead:\n" + "\n".join(found)


def test_the_check_sees_a_direct_use(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("def f(self):\n    return self.store.keys.count(1, 'm')\n")
    assert _reaches_ops(probe, tmp_path) == ["probe.py:2: .keys.count"]
