"""Import contracts that also see the imports the code makes by name (`lint-imports`, pyproject).

import-linter reads `import` statements. The provider registry (egomem/registry.py) imports its
targets by dotted path when a provider is built: a module that calls `providers.create("llm", ...)`
(or `egomem.llm.create_provider`) loads whatever the registry names for that kind, fallbacks
included (the `rules` LLM provider lives in `egomem.memory`). `dynamic_layers` and
`dynamic_forbidden` are the built-in `layers` and `forbidden` contracts run on the import graph
plus those edges, each marked with the call's line, so a layer the registry reaches from a
builder is a broken contract like any import; a known one is declared in `ignore_imports`.

The other imports by name stay inside one layer or outside the project: `egomem.bench` loads
its own benchmark modules by name (bench/__init__.py), `egomem.llm.local` loads llama_cpp (the
`gguf` extra).
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

from grimp import ImportGraph
from importlinter.contracts.forbidden import ForbiddenContract
from importlinter.contracts.layers import LayersContract
from importlinter.domain.contract import ContractCheck

SRC = Path(__file__).resolve().parents[1] / "src"
# The builders: a call of one of these names, imported from this module, builds providers.
BUILDERS = {"create": ("egomem.providers", None), "create_provider": ("egomem.llm", "llm")}


@cache
def registry_targets() -> dict[str, tuple[str, ...]]:
    """kind -> the modules its registry names (every provider may be built: fallbacks too)."""
    import egomem.providers  # noqa: F401  (registers the built-in providers)
    from egomem.registry import ALL

    return {
        kind: tuple(sorted({reg._entry(name).target.split(":")[0] for name in reg.names()}))
        for kind, reg in ALL.items()
    }


def _module_file(module: str) -> Path | None:
    base = SRC.joinpath(*module.split("."))
    for cand in (base.with_suffix(".py"), base / "__init__.py"):
        if cand.is_file():
            return cand
    return None


def builds(source: str) -> list[tuple[int, str | None, str]]:
    """(line, kind or None for any kind, the line's text) of every provider built in `source`."""
    tree = ast.parse(source)
    imported = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name in BUILDERS and node.module == BUILDERS[alias.name][0]
    }
    lines = source.splitlines()
    out: list[tuple[int, str | None, str]] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in imported):
            continue
        kind = BUILDERS[node.func.id][1]
        if kind is None and node.args and isinstance(node.args[0], ast.Constant):
            kind = str(node.args[0].value)
        out.append((node.lineno, kind, lines[node.lineno - 1].strip()))
    return out


def add_registry_imports(graph: ImportGraph) -> None:
    """Add an import from each builder to the modules the registry may load for it."""
    targets = registry_targets()
    for module in sorted(graph.modules):
        file = _module_file(module)
        if file is None or "create" not in (text := file.read_text(encoding="utf-8")):
            continue
        for line, kind, contents in builds(text):
            for kind_ in [kind] if kind is not None else sorted(targets):
                for target in targets.get(kind_, ()):
                    if target != module and target in graph.modules:
                        graph.add_import(
                            importer=module,
                            imported=target,
                            line_number=line,
                            line_contents=f"{contents}  # registry: {kind_} -> {target}",
                        )


class DynamicLayersContract(LayersContract):
    """`layers`, on the graph with the registry's imports by name."""

    type_name = "dynamic_layers"

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        add_registry_imports(graph)  # the graph is this contract's copy
        return super().check(graph, verbose)


class DynamicForbiddenContract(ForbiddenContract):
    """`forbidden`, on the graph with the registry's imports by name."""

    type_name = "dynamic_forbidden"

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        add_registry_imports(graph)
        return super().check(graph, verbose)
