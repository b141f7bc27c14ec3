"""Every ``>>>`` example in the package runs, and every public name of the library has one.

(a) Each module of :mod:`commbook` (found with :func:`pkgutil.walk_packages`, the book layer
included) has its docstring examples run by :mod:`doctest`, one test per module, with
ELLIPSIS and NORMALIZE_WHITESPACE; a failing example fails with doctest's own report.

(b) Each public top-level function and class *defined* in a library module (core, workloads,
measure; not ``commbook.book.*``) carries at least one ``>>>`` example in its docstring (a
class: in the class docstring).  Public: the name has no leading underscore.  Defined: the
object's ``__module__`` is that module (an imported name is checked where it is defined).
:data:`EXEMPT` may name an exception only together with its written reason.
"""
from __future__ import annotations

import doctest
import importlib
import inspect
import io
import pkgutil

import pytest

import commbook

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

MODULES = sorted({commbook.__name__} | {m.name for m in pkgutil.walk_packages(commbook.__path__, "commbook.")})
LIBRARY = [m for m in MODULES if not (m == "commbook.book" or m.startswith("commbook.book."))]

# "module.name": "why this public name has no example".  Empty: every name has one.
EXEMPT: dict[str, str] = {}


def test_discovery_sees_the_package():
    """Guard against a discovery that silently finds nothing."""
    assert {"commbook.units", "commbook.collectives.api", "commbook.topology.torus",
            "commbook.measure.fitting", "commbook.book.tables"} <= set(MODULES)
    assert len(LIBRARY) > 40 and len(MODULES) > len(LIBRARY)


@pytest.mark.parametrize("name", MODULES)
def test_examples_run(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    report = io.StringIO()
    for test in finder.find(module, name):
        runner.run(test, out=report.write)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed\n{report.getvalue()}"


def _is_routine_or_class(obj) -> bool:
    return inspect.isclass(obj) or inspect.isroutine(inspect.unwrap(obj))


def public_names(module) -> list[str]:
    """Public top-level functions and classes defined in ``module`` (not imported into it)."""
    out = []
    for attr, obj in vars(module).items():
        if attr.startswith("_") or not _is_routine_or_class(obj):
            continue
        if getattr(obj, "__module__", None) == module.__name__:
            out.append(attr)
    return sorted(out)


def has_example(obj) -> bool:
    """A ``>>>`` line in the object's own docstring (a class's, not one inherited)."""
    doc = obj.__dict__.get("__doc__") if inspect.isclass(obj) else inspect.getdoc(obj)
    return ">>>" in (doc or "")


def test_exemptions_have_reasons():
    for key, why in EXEMPT.items():
        assert isinstance(why, str) and len(why.split()) >= 4, f"EXEMPT[{key!r}] needs a written reason"
        mod, _, attr = key.rpartition(".")
        assert mod in LIBRARY and attr in public_names(importlib.import_module(mod)), \
            f"EXEMPT[{key!r}] names no public function or class of the library"


@pytest.mark.parametrize("name", LIBRARY)
def test_every_public_name_has_an_example(name):
    module = importlib.import_module(name)
    missing = [a for a in public_names(module)
               if f"{name}.{a}" not in EXEMPT and not has_example(getattr(module, a))]
    assert not missing, f"{name}: no >>> example in the docstring of {', '.join(missing)}"
