"""No import cycles inside the package: modules (and the subpackages they live in) form a DAG.

Every ``import`` counts, including those inside functions (a lazy import hides
a cycle from Python, not from the reader) and those under ``if TYPE_CHECKING:``
(a name imported for its type still ties the two modules: the launch result
and its renderer once imported each other that way, one of the pair only for
the annotation).
Importing ``a.b.c`` also depends on the package ``a.b`` (its ``__init__`` runs
first), unless the importer lives in it; the root package is left out, since it
only names the public API.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "ts_explore"
ROOT = PACKAGE.name


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_only(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def imports_of(path: Path, modules: set[str], types: bool = True) -> set[str]:
    """The package modules ``path`` imports (with their parent packages); ``types=False`` leaves out the
    imports under ``if TYPE_CHECKING:``."""
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    targets: set[str] = set()
    for node in ast.walk(tree):
        if not types and isinstance(node, (ast.Import, ast.ImportFrom)) and _type_checking_only(node, parents):
            continue
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            targets.add(stem)
            targets.update(f"{stem}.{alias.name}" for alias in node.names)  # "from . import x": a module
    found = set()
    for target in targets:
        parts = target.split(".")
        for i in range(2, len(parts) + 1):  # the module and the packages above it, not the root
            name = ".".join(parts[:i])
            if name in modules and name != me and not me.startswith(name + "."):  # own packages run first
                found.add(name)
    return found


def import_graph(types: bool = True) -> dict[str, set[str]]:
    """``{module: package modules it imports}``; ``types=False``: without the imports made for annotations only."""
    files = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(f) for f in files}
    return {module_name(f): imports_of(f, modules, types) for f in files if module_name(f) != ROOT}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_checker_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_relative_and_lazy_imports() -> None:
    graph = import_graph()
    assert "ts_explore.kernels.contract" in graph["ts_explore.scenarios.base"]  # from ..kernels.contract import
    assert "ts_explore.render.tree" in graph["ts_explore.render.display"]  # imported inside a function


def test_an_import_for_annotations_closes_a_cycle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A result that draws itself and a renderer that imports the result only for its annotation: a cycle."""
    package = tmp_path / "ts_explore"
    (package / "gpu").mkdir(parents=True)
    (package / "render").mkdir()
    for init in (package / "__init__.py", package / "gpu" / "__init__.py", package / "render" / "__init__.py"):
        init.write_text("")
    (package / "gpu" / "result.py").write_text("def html(r):\n    from ..render.plots import draw\n    return draw(r)\n")
    (package / "render" / "plots.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..gpu.result import Result\n")
    monkeypatch.setitem(globals(), "PACKAGE", package)
    graph, runtime = import_graph(), import_graph(types=False)
    assert "ts_explore.gpu.result" in graph["ts_explore.render.plots"]
    assert "ts_explore.gpu.result" not in runtime["ts_explore.render.plots"]
    assert cycles(graph) == [["ts_explore.gpu.result", "ts_explore.render.plots"]]
    assert cycles(runtime) == []


def test_the_package_has_no_import_cycle() -> None:
    found = cycles(import_graph())
    if found:
        pytest.fail("import cycles: " + "; ".join(" <-> ".join(c) for c in found))
