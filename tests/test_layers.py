"""The package's layering, read from the source with ast (nothing is imported).

(a) no import cycles between commbook modules; (b) nothing in the core imports the book
layer or a workload; (c) inside the core, a module imports only modules at or below its
layer: units/checks <- hardware/coefficients <- topology <- cost/double_tree/bandwidth <- rounds/buffers <- comm_sim <-
collectives; (d) every module has at most 420 lines.  Where things go (ARCHITECTURE.md at the root):
(e) chapter values (``NM_1_4``, ``CHAPTER_*``, ``FIGURE3_*``, ``SINGLE_NODE``) live in the book layer;
(f) a chapter's book package takes no private name from another chapter's; (g) no Chinese outside the
book layer's text files; (h) one formatter family, :mod:`commbook.units`; (i) every path
ARCHITECTURE.md names exists.

Every import counts, also one inside a function (a lazy import is still a dependency).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "code" / "commbook"
MAX_LINES = 420

CORE_LAYER = {
    "commbook.units": 0, "commbook.checks": 0,
    "commbook.hardware": 1, "commbook.coefficients": 1,
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


# ============================================================================ where things go
TREES = {name: ast.parse(path.read_text(encoding="utf-8"), filename=str(path)) for name, path in MODULES.items()}
REPO = ROOT.parents[1]


def _in_book(name: str) -> bool:
    return name == "commbook.book" or name.startswith("commbook.book.")


CHAPTER_VALUE = re.compile(r"^(CHAPTER_|FIGURE\d|NM_?\d|SINGLE_NODE)")


def _module_level_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        targets = (node.targets if isinstance(node, ast.Assign) else [node.target]
                   if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else [])
        for t in targets:
            names |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
    return names


def test_chapter_values_live_in_the_book_layer():
    """A chapter's stated inputs (Napkin Math boxes, its tables, its figures' claims) are
    book values: the core, the workloads and measure take them as arguments."""
    bad = {name: sorted(n for n in _module_level_names(tree) if CHAPTER_VALUE.match(n))
           for name, tree in TREES.items() if not _in_book(name)}
    bad = {k: v for k, v in bad.items() if v}
    assert not bad, f"chapter values outside commbook.book (move them to book/<chapter>/inputs.py): {bad}"
    assert any(CHAPTER_VALUE.match(n) for n in _module_level_names(TREES["commbook.book.ch1.inputs"]))


def _chapter(name: str) -> str | None:
    """The chapter a book module belongs to: ``p5``, ``ch1`` or ``measuring`` (None: shared)."""
    parts = name.split(".")
    if len(parts) < 3 or parts[:2] != ["commbook", "book"]:
        return None
    if parts[2] in ("p5", "ch1"):
        return parts[2]
    return "measuring" if parts[2].startswith("measuring") else None


def _private_imports(name: str) -> list[str]:
    package = name if _is_package(name) else name.rpartition(".")[0]
    out = []
    for node in ast.walk(TREES[name]):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package.split(".")
            base = base[:len(base) - (node.level - 1)]
            mod = ".".join(base + ([node.module] if node.module else []))
        else:
            mod = node.module or ""
        for a in node.names:
            if a.name.startswith("_") and not a.name.startswith("__"):
                out.append(f"{mod}.{a.name}")
    return out


def test_no_private_imports_across_chapters():
    """What two chapters share is public, in a shared book module (plots, diagrams, tables)."""
    assert _chapter("commbook.book.p5.figures") == "p5" and _chapter("commbook.book.measuring_p5") == "measuring"
    bad = []
    for name in sorted(MODULES):
        mine = _chapter(name)
        if mine is None:
            continue
        for target in _private_imports(name):
            module = target.rpartition(".")[0]
            while module and module not in MODULES:
                module = module.rpartition(".")[0]
            theirs = _chapter(module)
            if theirs is not None and theirs != mine:
                bad.append(f"{name} imports {target}")
    assert not bad, "private names across chapters:\n" + "\n".join(bad)


CJK = re.compile("[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")


def _cjk_lines(names) -> list[str]:
    out = []
    for name in sorted(names):
        for i, line in enumerate(MODULES[name].read_text(encoding="utf-8").splitlines(), 1):
            if CJK.search(line):
                out.append(f"{MODULES[name].relative_to(REPO)}:{i}")
    return out


def test_no_chinese_outside_the_book_layer():
    """The core, the workloads and measure are English only: the book's Chinese words are
    in ``book/texts/*.toml`` (the registry's display names included)."""
    bad = _cjk_lines(n for n in MODULES if not _in_book(n))
    assert not bad, "Chinese in library code:\n" + "\n".join(bad)


def test_no_chinese_in_the_book_code():
    """The book layer's Python names its words by key; the words are in its text files."""
    bad = _cjk_lines(n for n in MODULES if _in_book(n))
    assert not bad, f"Chinese in {len(bad)} lines of book-layer Python, first: {bad[:5]}"


def _formatting(tree: ast.Module) -> list[str]:
    """Functions named fmt_* and f-strings that format a ratio ("{x:.2f}×") or a percentage
    ("{x:.1f}%", "{x:.1%}")."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.lstrip("_").startswith("fmt_"):
            out.append(f"def {node.name} (line {node.lineno})")
        if not isinstance(node, ast.JoinedStr):
            continue
        vals = node.values
        for i, v in enumerate(vals):
            if not isinstance(v, ast.FormattedValue):
                continue
            spec = v.format_spec
            if spec is not None and any(isinstance(c, ast.Constant) and str(c.value).endswith("%")
                                        for c in spec.values):
                out.append(f"a {{…:%}} percentage (line {node.lineno})")
            nxt = vals[i + 1] if i + 1 < len(vals) else None
            if not (isinstance(nxt, ast.Constant) and isinstance(nxt.value, str)):
                continue
            after = vals[i + 2] if i + 2 < len(vals) else None
            if nxt.value.startswith("%"):
                out.append(f"a percentage '{{…}}%' (line {node.lineno})")
            elif nxt.value.startswith("×") and not (nxt.value == "×" and isinstance(after, ast.FormattedValue)):
                out.append(f"a ratio '{{…}}×' (line {node.lineno})")   # not a product or shape "{a}×{b}"
    return out


@pytest.mark.parametrize("name", [n for n in sorted(MODULES) if n != "commbook.units"])
def test_one_formatter_family(name):
    """Numbers become text through commbook.units (fmt_bytes, fmt_time, fmt_rate,
    fmt_ratio, fmt_pct, fmt_count, fmt_number) and book/glue.py; nowhere else."""
    found = _formatting(TREES[name])
    assert not found, f"{name} formats numbers itself: {found}"


def test_the_formatting_scan_sees_what_it_should():
    tree = ast.parse('def fmt_x(v):\n    return f"{v:.2f}×"\n'
                     'a, b, c = f"{p}×{q}", f"{s:.1f}%", f"{s:.0%}"\nd = f"{n}× faster"\n')
    found = _formatting(tree)
    assert sum("def fmt_x" in f for f in found) == 1 and sum("ratio" in f for f in found) == 2
    assert sum("percentage" in f for f in found) == 2


ARCHITECTURE = REPO / "ARCHITECTURE.md"


def _architecture_paths() -> set[str]:
    """The paths ARCHITECTURE.md names: code spans with a ``/`` and no space, placeholder
    or wildcard (``code/commbook/units.py``, ``tests/``; not ``chapters/en/<chapter>/``)."""
    spans = re.findall(r"`([^`\n]+)`", ARCHITECTURE.read_text(encoding="utf-8"))
    return {s for s in spans if "/" in s and not re.search(r"[\s{}<>*()]", s)}


def test_architecture_names_only_paths_that_exist():
    """Every file or folder ARCHITECTURE.md names is there, from the repository root."""
    paths = _architecture_paths()
    assert len(paths) >= 20 and "code/commbook/collectives/registry.py" in paths, sorted(paths)
    missing = sorted(p for p in paths if not (REPO / p).exists())
    assert not missing, f"ARCHITECTURE.md names paths that do not exist: {missing}"
