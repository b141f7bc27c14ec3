"""The package's layering, read from the source with ast (nothing is imported).

(a) no import cycles between commbook modules; (b) nothing in the core imports the book
layer or a workload; (c) inside the core, a module imports only modules at or below its
layer: units/checks <- hardware <- topology <- cost/double_tree/bandwidth <- rounds/buffers <- comm_sim <-
collectives; (d) every module has at most 420 lines.

Every import counts, also one inside a function (a lazy import is still a dependency).
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "code" / "commbook"
MAX_LINES = 420

CORE_LAYER = {
    "commbook.units": 0, "commbook.checks": 0,
    "commbook.hardware": 1,
    "commbook.topology": 2,
    "commbook.cost": 3, "commbook.double_tree": 3, "commbook.bandwidth": 3, "commbook.physics": 3,
    "commbook.rounds": 4, "commbook.buffers": 4, "commbook.comm_sim": 4,
    "commbook.collectives": 5,          # the package and every module in it
}
WORKLOADS = {"commbook.llm", "commbook.moe", "commbook.parallelism", "commbook.overlap", "commbook.compression"}
MEASURE = "commbook.measure"


def _is_workload(name: str) -> bool:
    """A workload module, or a module of a workload package (overlap, compression)."""
    return any(name == w or name.startswith(w + ".") for w in WORKLOADS)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _imports(name: str) -> set[str]:
    """The commbook modules ``name`` imports (absolute or relative, anywhere in the file)."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"), filename=str(MODULES[name]))
    package = name if _is_package(name) else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            # "from pkg import sub" imports the submodule sub when there is one
            targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in MODULES else mod for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in MODULES:       # "commbook.x.y" where y is an attribute
                t = t.rpartition(".")[0]
            if t.startswith("commbook") and t != name:
                found.add(t)
    return found


GRAPH = {name: _imports(name) for name in MODULES}


def _layer(name: str) -> int | None:
    for prefix, layer in CORE_LAYER.items():
        if name == prefix or name.startswith(prefix + "."):
            return layer
    return None


def test_the_scan_sees_the_package():
    """Guard against a vacuous pass: the walk finds the core and resolves relative imports."""
    assert {"commbook.comm_sim", "commbook.collectives.registry", "commbook.book.tables"} <= set(MODULES)
    assert "commbook.comm_sim" in GRAPH["commbook.collectives.ring"]
    assert {"commbook.cost", "commbook.double_tree", "commbook.collectives.trees"} <= GRAPH["commbook.collectives.registry"]


def test_no_import_cycles():
    """Tarjan's strongly connected components: every one must be a single module."""
    index, low, stack, on, cycles, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(GRAPH[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles: {cycles}"


def test_core_imports_neither_the_book_nor_a_workload():
    bad = {name: sorted(t for t in deps if t.startswith("commbook.book") or _is_workload(t))
           for name, deps in GRAPH.items() if _layer(name) is not None}
    bad = {k: v for k, v in bad.items() if v}
    assert not bad, f"core modules import the book layer or a workload: {bad}"


def test_workloads_and_measure_do_not_import_the_book():
    """Above the core, only the book layer may import the book layer."""
    bad = {name: sorted(t for t in deps if t.startswith("commbook.book"))
           for name, deps in GRAPH.items() if _is_workload(name) or name.startswith(MEASURE)}
    bad = {k: v for k, v in bad.items() if v}
    assert WORKLOADS <= set(MODULES) and any(n.startswith(MEASURE + ".") for n in MODULES)
    assert not bad, f"workload or measure modules import the book layer: {bad}"


def test_core_imports_only_its_own_layer_or_below():
    bad = []
    for name, deps in sorted(GRAPH.items()):
        mine = _layer(name)
        if mine is None:
            continue
        for t in sorted(deps):
            theirs = _layer(t)
            if t == "commbook":                 # the package itself holds only __version__
                continue
            if theirs is None or theirs > mine:
                bad.append(f"{name} (layer {mine}) imports {t} (layer {theirs})")
    assert not bad, "\n".join(bad)


# Modules known to be over the limit while they are being split (none now).  An entry's
# strict xfail fails as soon as the module is short enough, so the list cannot go stale.
KNOWN_LONG: set[str] = set()


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=f"{n} is over {MAX_LINES} lines"))
    if n in KNOWN_LONG else n for n in sorted(MODULES)])
def test_module_length(name):
    lines = len(MODULES[name].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{name}: {lines} lines (at most {MAX_LINES})"
