"""The package's layout: no import cycles among bridgefleet modules (function-level imports included), every
module imports only its own layer or those below (:data:`LAYERS`, docs/architecture.md), every package says its job.

Run as a script to print the cycles: ``python tests/test_layout.py``.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def modules(src: Path = SRC) -> dict[str, tuple[Path, bool]]:
    """Every module of bridgefleet: dotted name → (file, is a package's __init__)."""
    out = {}
    for path in sorted((src / "bridgefleet").rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if package else parts)] = (path, package)
    return out


def import_graph(src: Path = SRC) -> dict[str, set[str]]:
    """Module → the bridgefleet modules it imports anywhere in its file (top level, functions, TYPE_CHECKING
    blocks). ``from a import b`` is an edge to ``a.b`` when that is a module, else to ``a``; the implicit import
    of a parent package's __init__ is not counted (it would tie every module to bridgefleet/__init__)."""
    mods = modules(src)

    def known(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, (path, package) in mods.items():
        here = name if package else name.rpartition(".")[0]
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from .x import y, from .. import z
                    up = here.split(".")[: len(here.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            else:
                continue
            deps.update(t for t in map(known, targets) if t is not None and t != name)
        graph[name] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def describe(graph: dict[str, set[str]], component: list[str]) -> str:
    return "; ".join(f"{m} -> {', '.join(sorted(graph[m] & set(component)))}" for m in component)


def test_the_import_graph_sees_function_level_and_relative_imports(tmp_path):
    pkg = tmp_path / "bridgefleet"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from bridgefleet.sub import b\n")
    (pkg / "sub" / "b.py").write_text("from .. import a\nimport bridgefleet.sub.c\n")
    (pkg / "sub" / "c.py").write_text("import os\n")
    graph = import_graph(tmp_path)
    assert graph["bridgefleet.a"] == {"bridgefleet.sub.b"}
    assert graph["bridgefleet.sub.b"] == {"bridgefleet.a", "bridgefleet.sub.c"}
    assert cycles(graph) == [["bridgefleet.a", "bridgefleet.sub.b"]]
    assert "bridgefleet.training.runner" in import_graph()["bridgefleet.bench.measure"]  # a function-level import


LAYERS = (
    ("config", "outputs", "paths", "textfile", "cluster", "stats", "typed_numbers", "progress"),
    ("sim",),
    ("inventory",),
    ("envs", "replay", "planning", "calibration"),
    ("agents",),
    ("runs",),
    ("evaluation",),
    ("training",),
    ("report", "sweep"),
    ("bench",),
    ("cli", "__main__"),
)
"""The layers, lowest first: a module may import its own layer and those below (docs/architecture.md). The
package root (``bridgefleet``: the public API and the Gymnasium registration) sits above them all."""


def layer_of(module: str) -> int:
    top = module.split(".")[1] if "." in module else ""
    for i, names in enumerate(LAYERS):
        if top in names:
            return i
    return len(LAYERS)  # the package root


def test_every_module_imports_only_its_layer_or_lower():
    graph = import_graph()
    assert all(layer_of(m) < len(LAYERS) for m in graph if m != "bridgefleet"), "a package missing from LAYERS"
    upward = sorted(f"{m} -> {d}" for m, deps in graph.items() for d in deps
                    if d != "bridgefleet" and layer_of(d) > layer_of(m))
    assert not upward, "imports of a higher layer: " + "; ".join(upward)


def test_the_layer_check_sees_an_upward_import():
    assert layer_of("bridgefleet.training.loop") > layer_of("bridgefleet.evaluation.evaluate")
    assert layer_of("bridgefleet.runs.load") < layer_of("bridgefleet.training.runner")  # loading needs no trainer


def test_every_package_says_its_job_in_its_init():
    for init in sorted((SRC / "bridgefleet").rglob("__init__.py")):
        if init.parent.name == "data" or "__pycache__" in init.parts:
            continue
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc and len(doc.splitlines()[0]) > 20, f"{init}: no docstring saying the package's job"
    packages = {p.parent for p in (SRC / "bridgefleet").rglob("*.py")} - {SRC / "bridgefleet" / "data"}
    assert all((p / "__init__.py").exists() for p in packages), "a folder of modules without __init__.py"


def test_no_import_cycles_among_bridgefleet_modules():
    graph = import_graph()
    found = cycles(graph)
    assert not found, "import cycles: " + " | ".join(describe(graph, c) for c in found)


if __name__ == "__main__":
    g = import_graph()
    for c in cycles(g):
        print(describe(g, c))
    sys.exit(1 if cycles(g) else 0)
