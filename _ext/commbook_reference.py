"""The API reference's module lists, read from the package instead of typed by hand.

A reference page (``reference/*.md``) says which modules it documents with one line::

    <!-- commbook-modules: commbook.units commbook.topology.* -->

A package (``commbook.topology``) stands for itself and every module below it; the root
``commbook`` stands for its own ``__init__`` only.  When Sphinx reads the page, the line
becomes one section per module: its name as a heading and an ``automodule`` with the
members it defines (undocumented ones too, so that every function a table or figure names
has an anchor on its module's ``sphinx.ext.viewcode`` page).  Each object is documented
where it is defined, once: a package's or module's re-exports (names in its ``__all__``
imported from elsewhere) are left to their own module (``:ignore-module-all:``).  A module added to the package is
documented on the next build; :func:`documented` lets a test check that every module is.

Two readings of the docstrings (``autodoc-process-docstring``) keep them plain text for a
reader of the code and valid reStructuredText for Sphinx:

* ``|x|`` written as an absolute value is not a substitution reference: its bars become
  U+2223 (∣, the same width, so a simple table's columns stay aligned), outside inline
  literals and roles;
* ``:mod:`name``` naming a sibling module (``:mod:`base``` in ``commbook.topology.clusters``)
  means that sibling, as a relative import would: it becomes ``:mod:`~commbook.topology.base```
  (Sphinx would otherwise find several ``base`` modules and warn).
"""
from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import re
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

MARKER = re.compile(r"^<!-- commbook-modules: (.+?) -->$", re.M)
OPTIONS = (":members:", ":undoc-members:", ":show-inheritance:", ":ignore-module-all:")


def expand(spec: str) -> list[str]:
    """The module names a marker's list names, in order (a package below the root: itself
    and its submodules, sorted)."""
    out: list[str] = []
    for name in spec.split():
        module = importlib.import_module(name)  # an unknown name fails the build here
        out.append(name)
        if "." in name and hasattr(module, "__path__"):
            out += sorted(m.name for m in pkgutil.walk_packages(module.__path__, name + "."))
    return out


def section(module: str) -> str:
    options = "\n".join(f"   {o}" for o in OPTIONS)
    return f"## `{module}`\n\n```{{eval-rst}}\n.. automodule:: {module}\n{options}\n```\n"


def render(text: str) -> str:
    """A reference page's text with every marker replaced by its modules' sections."""
    return MARKER.sub(lambda m: "\n".join(section(name) for name in expand(m.group(1))), text)


def documented(folder: Path) -> list[str]:
    """Every module the pages in ``folder`` document (for the test that none is missing)."""
    names: list[str] = []
    for page in sorted(folder.glob("*.md")):
        for m in MARKER.finditer(page.read_text(encoding="utf-8")):
            names += expand(m.group(1))
    return names


_LITERAL = re.compile(r"(`+[^`]*`+)")
_BARS = re.compile(r"(?<![\\\w|])\|(?=[^\s|])((?:[^|\n]|\n(?![ \t]*\n))*?[^\s|\\])\|(?![\w|])")

_MOD = re.compile(r":mod:`(\.?)([A-Za-z_][\w.]*)`")


def _kept(line: str) -> bool:
    """Lines whose bars are RST's own or code: doctest lines, line blocks, grid tables."""
    s = line.lstrip()
    return s.startswith((">>>", "...", "| ", "+-", "+=")) or s == "|"


def absolute_bars(lines: list[str]) -> list[str]:
    """``lines`` (one docstring) with every ``|x|`` outside backquotes, doctests, line blocks
    and grid tables written with U+2223 bars; an ``|x|`` may span two lines."""
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            pieces = _LITERAL.split("\n".join(run))
            pieces[::2] = [_BARS.sub("\u2223\\1\u2223", piece) for piece in pieces[::2]]
            out.extend("".join(pieces).split("\n"))
            run.clear()
    for line in lines:
        if _kept(line):
            flush()
            out.append(line)
        else:
            run.append(line)
    flush()
    return out


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def sibling_modules(line: str, module: str) -> str:
    """``:mod:`x``` (or ``:mod:`.x```) in a docstring of ``module`` as the full name of its
    sibling ``x`` when there is one."""
    package = module.rpartition(".")[0]

    def one(m: re.Match) -> str:
        name = m.group(2)
        if package and (m.group(1) or "." not in name) and _is_module(f"{package}.{name}"):
            return f":mod:`~{package}.{name}`"
        return m.group(0)
    return _MOD.sub(one, line) if package else line


def _process_docstring(app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    module = name if what == "module" else getattr(obj, "__module__", None) or name.rpartition(".")[0]
    if what == "module" and hasattr(obj, "__path__"):
        module = name + ".__init__"  # a package's siblings are its own modules
    lines[:] = [sibling_modules(line, module) for line in absolute_bars(lines)]


def _source_read(app: Sphinx, docname: str, source: list[str]) -> None:
    if docname.startswith("reference/") and MARKER.search(source[0]):
        source[0] = render(source[0])


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("source-read", _source_read)
    app.connect("autodoc-process-docstring", _process_docstring)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
