"""scripts/import_contracts.py: the imports the provider registry makes by name are edges the
import contracts check (`lint-imports` runs the contracts themselves)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import grimp

ROOT = Path(__file__).resolve().parents[2]


def _contracts() -> ModuleType:
    spec = importlib.util.spec_from_file_location("import_contracts", ROOT / "scripts" / "import_contracts.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_builds_finds_provider_construction_by_kind() -> None:
    source = """
from egomem.providers import create
from egomem.llm import create_provider
from other import create as other_create

a = create("asr", cfg, ctx)
b = create(kind, cfg, ctx)
c = create_provider(cfg)
d = registry.create("bench")
e = other_create("llm")
"""
    found = _contracts().builds(source)
    assert [(line, kind) for line, kind, _ in found] == [(6, "asr"), (7, None), (8, "llm")]
    assert found[0][2] == 'a = create("asr", cfg, ctx)'


def test_builds_ignores_a_create_of_another_module() -> None:
    assert _contracts().builds("from egomem.server.tenants import create\ncreate('x')\n") == []


def test_the_registry_imports_become_graph_edges() -> None:
    mod = _contracts()
    targets = mod.registry_targets()
    assert "egomem.memory.rules_provider" in targets["llm"]  # the LLM fallback lives in memory
    graph = grimp.build_graph("egomem", cache_dir=None)
    assert not graph.direct_import_exists(importer="egomem.llm", imported="egomem.memory.rules_provider")
    mod.add_registry_imports(graph)
    # llm/__init__ builds LLMs: the registry may load the rules provider (declared in pyproject).
    assert graph.direct_import_exists(importer="egomem.llm", imported="egomem.memory.rules_provider")
    # runtime/build builds the dialog model: the template responder is reached by name.
    assert graph.direct_import_exists(importer="egomem.runtime.build", imported="egomem.dialog.template")
    details = graph.get_import_details(importer="egomem.llm", imported="egomem.memory.rules_provider")
    assert details and "registry: llm -> egomem.memory.rules_provider" in details[0]["line_contents"]
