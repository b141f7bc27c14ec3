"""The machinery every exercise builder shares: cells in both languages, placeholders
filled from the executed code, and the notebooks written (and executed) to
``exercises/{zh,en}/<name>.ipynb``.

A builder script (``build_*.py``) declares its notebooks with :func:`notebook`, then adds
cells with :func:`md`, :func:`setup`, :func:`code` and :func:`solution`, and ends with ``main()``.

Markdown may hold placeholders ``<<expr>>`` or ``<<expr:spec>>``: the code cells run in
order, in one namespace as the kernel would, and each placeholder is evaluated in the
namespace the next code cell leaves (the cell that computes, prints and asserts the
numbers of the same exercise).  A float needs a format spec; an unknown name or a failed
assert stops the build.  ``n_exercises()`` counts the exercises of the notebook.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import math
import re
from fractions import Fraction
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
SOLUTION_TAGS = ["hide-input", "hide-output"]
PLACEHOLDER = re.compile(r"<<(.+?)>>", re.S)

# The set-up cell (imports, helpers) is folded in the book behind this one-line prompt.
SETUP_PROMPT = {"zh": ("准备代码：导入模块、定义几个小工具（先运行这一格）", "收起准备代码"),
                "en": ("Set-up code: imports and a few helpers (run this cell first)", "Hide the set-up code")}

# NOTEBOOKS[name] is a list of ("md", {"zh": ..., "en": ...}) or ("code", source, tags, setup).
# A code source may contain the placeholder {LANG}; nothing else differs per language.
NOTEBOOKS: dict[str, list[tuple]] = {}
_current: list[str] = []


def notebook(name: str) -> None:
    """Start the notebook ``name`` (``exercises/{zh,en}/<name>.ipynb``): the cells that follow go there."""
    if name in NOTEBOOKS:
        raise ValueError(f"notebook {name!r} is defined twice")
    NOTEBOOKS[name] = []
    _current[:] = [name]


def _cells() -> list[tuple]:
    if not _current:
        raise RuntimeError("call notebook(name) before adding cells")
    return NOTEBOOKS[_current[0]]


def md(zh: str, en: str) -> None:
    _cells().append(("md", {"zh": zh.strip("\n"), "en": en.strip("\n")}))


def code(source: str, tags: list[str] | None = None) -> None:
    _cells().append(("code", source.strip("\n"), list(SOLUTION_TAGS if tags is None else tags), False))


def setup(source: str) -> None:
    """The set-up cell above the first exercise: in the book its code is folded behind
    :data:`SETUP_PROMPT`; in Jupyter it is a plain cell to run first."""
    _cells().append(("code", source.strip("\n"), ["hide-input"], True))


def solution(zh: str, en: str) -> None:
    """The written solution, folded into a dropdown until the reader opens it."""
    md(f"::::{{dropdown}} 参考解答\n{zh.strip()}\n::::",
       f"::::{{dropdown}} Solution\n{en.strip()}\n::::")


# ----------------------------------------------------------------------------- formatting
def tex_int(x) -> str:
    """33554432 -> 33{,}554{,}432 (thousands separators inside math)."""
    if x != int(x):
        raise ValueError(f"tex_int needs a whole number, got {x!r}")
    return f"{int(x):,}".replace(",", "{,}")


def tex_sci(x: float) -> str:
    """Engineering notation: 2e-6 -> 2\\times10^{-6}; 1e10 -> 10\\times10^{9}."""
    e = 3 * math.floor(math.log10(abs(x)) / 3)
    m = f"{x / 10 ** e:.3g}"
    return f"10^{{{e}}}" if m == "1" else f"{m}\\times10^{{{e}}}"


def tex_frac(x) -> str:
    """A fraction as \\frac{a}{b} (or a whole number)."""
    f = Fraction(x).limit_denominator(10_000)
    return str(f.numerator) if f.denominator == 1 else f"\\frac{{{f.numerator}}}{{{f.denominator}}}"


HELPERS = {"tex_int": tex_int, "tex_sci": tex_sci, "tex_frac": tex_frac}


def render(text: str, ns: dict, where: str) -> str:
    """Replace every <<expr>> / <<expr:spec>> by its value, computed in ``ns``."""
    def value(m: re.Match) -> str:
        expr, spec = m.group(1), ""
        if ":" in expr:
            expr, spec = expr.rsplit(":", 1)
        try:
            v = eval(expr, {**ns, **HELPERS})
        except Exception as exc:
            raise RuntimeError(f"{where}: cannot evaluate <<{m.group(1)}>>: {exc!r}") from exc
        if isinstance(v, float) and not spec:
            raise RuntimeError(f"{where}: <<{m.group(1)}>> is a float and needs a format spec")
        return format(v, spec)
    return PLACEHOLDER.sub(value, text)


# ----------------------------------------------------------------------------- build
def _n_exercises(name: str) -> int:
    return sum(c[0] == "md" and "\n## 练习 " in "\n" + c[1]["zh"] for c in NOTEBOOKS[name])


def namespaces(name: str, lang: str) -> dict[int, dict]:
    """Run the code cells of one notebook in order, in one namespace as the kernel would; for
    each code cell (by index) the namespace as that cell leaves it."""
    ns: dict = {"__name__": "__main__"}
    snapshots = {}
    for i, cell in enumerate(NOTEBOOKS[name]):
        if cell[0] == "code":
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(cell[1].replace("{LANG}", lang), f"<{name} cell {i}>", "exec"), ns)
            snapshots[i] = dict(ns)
    return snapshots


def build(name: str, lang: str) -> nbformat.NotebookNode:
    """The notebook ``name`` in ``lang``, placeholders filled in, not executed."""
    snapshots = namespaces(name, lang)
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    for i, cell in enumerate(NOTEBOOKS[name]):
        if cell[0] == "md":
            following = [j for j in snapshots if j > i]
            if not following:
                raise RuntimeError(f"{name}: markdown cell {i} has no code cell after it to compute its numbers")
            ns = {**snapshots[min(following)], "n_exercises": lambda: _n_exercises(name)}
            c = nbformat.v4.new_markdown_cell(render(cell[1][lang], ns, f"{name} {lang} cell {i}"))
        else:
            c = nbformat.v4.new_code_cell(cell[1].replace("{LANG}", lang))
            if cell[2]:
                c.metadata["tags"] = cell[2]
            if cell[3]:
                show, hide = SETUP_PROMPT[lang]
                c.metadata["mystnb"] = {"code_prompt_show": show, "code_prompt_hide": hide}
        c.id = f"{name}-{i:02d}"
        nb.cells.append(c)
    return nb


def main(description: str, argv: list[str] | None = None) -> None:
    """Write (and unless ``--no-exec``, execute) every notebook the builder declared."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--no-exec", action="store_true", help="write the notebooks without executing them")
    parser.add_argument("--only", action="append", choices=sorted(NOTEBOOKS),
                        help="build only this notebook (repeatable; default: all)")
    parser.add_argument("--out", type=Path, default=ROOT / "exercises",
                        help="folder to write zh/<name>.ipynb and en/<name>.ipynb into (default: exercises/)")
    args = parser.parse_args(argv)
    for name in args.only or NOTEBOOKS:
        for lang in ("zh", "en"):
            nb = build(name, lang)
            path = args.out / lang / f"{name}.ipynb"
            path.parent.mkdir(parents=True, exist_ok=True)
            if not args.no_exec:
                NotebookClient(nb, kernel_name="python3", timeout=300, record_timing=False,
                               resources={"metadata": {"path": str(path.parent)}}).execute()
            nbformat.validate(nb)
            path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
            print(f"wrote {path}")
